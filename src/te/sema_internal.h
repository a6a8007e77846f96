// Shared state of semantic analysis (sema.cpp drives; resolve.cpp and ranges.cpp do the parts).
// Internal to src/te.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "support/status.h"
#include "task/task.h"
#include "te/ast.h"

namespace kf::te::detail {

// A variable used as a whole index of one tensor dimension: its range must be that extent.
struct Use {
  RefKind var_kind = RefKind::index_var;  // index_var or reduce_var
  int var = -1;
  Expr extent;        // the dimension's extent (static)
  std::string where;  // "A[i, k] (dimension 2 of A)"
  SourceLoc loc;
  bool soft = false;  // inside an access with `else`: a hint, not a constraint
};

// One stage under construction.
struct StageContext {
  const Task& task;
  const std::string& file;
  const std::vector<Stage>& earlier;           // stages defined so far
  const std::set<std::string>& later_targets;  // targets of statements after this one
  const std::vector<Bindings>& shapes;         // the task's shape points, resolved
  Stage& stage;
  std::vector<int> active;           // reduce var ids in scope, innermost last
  std::vector<bool> explicit_range;  // per reduce var
  std::vector<Use> uses;
  std::vector<const Expr*> self_reads;
  std::vector<int> stages_read;  // indices of earlier stages read
};

// Resolves names, reduction variables and types of `e` in place (recording uses and reads).
Status resolve_expr(StageContext& c, Expr& e);

// The extent formula of a declared tensor dimension as a resolved, static expression.
Expr formula_expr(const Task& task, const Formula& f, SourceLoc loc);

// Resolves a static expression (names: dims, derived sizes, scalars); any value type.
Status resolve_static(const Task& task, const std::string& file, Expr& e);

// Fills the ranges of stage vars without one and checks every use against the ranges.
// `lhs_known[i]`: LHS var i already has its range (outputs, explicit bounds).
Status infer_ranges(StageContext& c, const std::vector<bool>& lhs_known);

std::string quote(const std::string& s);

}  // namespace kf::te::detail
