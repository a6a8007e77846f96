// The TE parser: spec text -> Ast (syntax only; names are resolved by check() in sema.h).
//
//   Expected<Ast> ast = parse("C[i, j] = sum(k: A[i, k] * B[k, j])\n", "08_gemm/task.toml", 47);
//   to_string(*ast) == "C[i, j] = sum(k: (A[i, k] * B[k, j]))\n"
//
// Grammar (docs/te.md has the full language):
//   spec      := statement*                         each statement starts on a new line
//   statement := IDENT '[' [lhsvar (',' lhsvar)*] ']' '=' expr
//   lhsvar    := IDENT ['in' add '..' add]
//   expr      := and ('||' and)*
//   and       := cmp ('&&' cmp)*
//   cmp       := add [('<' | '<=' | '>' | '>=' | '==' | '!=') add]
//   add       := mul (('+' | '-') mul)*
//   mul       := unary (('*' | '/' | '%') unary)*
//   unary     := ('-' | '!') unary | postfix
//   postfix   := IDENT '[' [expr (',' expr)*] ']' ['else' unary] | primary
//   primary   := NUMBER | 'inf' | IDENT | '(' expr ')'
//              | FUNC '(' expr (',' expr)* ')'
//              | REDUCE '(' rvar (',' rvar)* ':' expr ')'
//   rvar      := IDENT ['in' add '..' add]
// REDUCE is sum, prod, max, min, argmax, argmin (max/min with two plain arguments are the
// elementwise functions). Errors read "FILE:LINE:COL: expected ...".
#pragma once

#include <string>
#include <string_view>

#include "support/status.h"
#include "te/ast.h"

namespace kf::te {

// `first_line` is the task.toml line of the text's first line (Task::te_line).
Expected<Ast> parse(std::string_view text, const std::string& file, int first_line);

// Parses text that is a single expression (a shape formula, a test's snippet).
Expected<Expr> parse_expression(std::string_view text, const std::string& file, int first_line);

}  // namespace kf::te
