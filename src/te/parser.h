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
//
// The spec is untrusted text: an expression whose tree is deeper than kMaxExprHeight (nested
// parentheses, a chain of 1,000 `+`, 300 nested calls) is refused with "the expression nests
// deeper than 256 levels", so no later stage recurses past that depth; so are specs past the
// size limits below.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "support/status.h"
#include "te/ast.h"

namespace kf::te {

// The deepest expression tree a spec may hold (every operator, call, access and reduction is a
// level; parentheses that add no node count towards the parser's own recursion limit, the same
// number).
inline constexpr int kMaxExprHeight = 256;
// Sizes of a spec the checker and lowering handle in time (several steps are quadratic in them):
// statements per spec; index variables of a left-hand side, indices of an access and variables of
// a reduction.
inline constexpr size_t kMaxStatements = 256;
inline constexpr size_t kMaxRank = 16;

// `first_line` is the task.toml line of the text's first line (Task::te_line).
Expected<Ast> parse(std::string_view text, const std::string& file, int first_line);

// Parses text that is a single expression (a shape formula, a test's snippet).
Expected<Expr> parse_expression(std::string_view text, const std::string& file, int first_line);

}  // namespace kf::te
