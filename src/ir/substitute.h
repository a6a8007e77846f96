// Replacing a variable by an expression, and asking whether a tree uses a variable.
//
//   Stmt body2 = substitute("j", i64(3), body);     // every Var "j" becomes 3
//   bool uses = stmt_uses_var(body, "j");
//
// A For, Let or LetStmt that rebinds the name shadows it: substitution stops at its body.
#pragma once

#include <map>
#include <set>
#include <string>

#include "ir/ir.h"

namespace kf::ir {

Expr substitute(const std::string& name, const Expr& replacement, const Expr& e);
Stmt substitute(const std::string& name, const Expr& replacement, const Stmt& s);
// Several at once (each replacement is not itself substituted into).
Stmt substitute(const std::map<std::string, Expr>& replacements, const Stmt& s);

bool expr_uses_var(const Expr& e, const std::string& name);
bool stmt_uses_var(const Stmt& s, const std::string& name);
// Whether a Load, Store or TransposeBlock names the buffer.
bool stmt_uses_buffer(const Stmt& s, const std::string& buffer);
// Whether evaluating the expression reads memory (it holds a Load).
bool expr_has_load(const Expr& e);

}  // namespace kf::ir
