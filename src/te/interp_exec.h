// The interpreter's operation, access and reduction nodes (built by interp_compile.cpp).
// Internal to src/te.
#pragma once

#include <string>
#include <vector>

#include "te/ast.h"
#include "te/interp_nodes.h"

namespace kf::te::detail {

// A tensor read's target, for loads and for messages.
struct AccessInfo {
  const double* data = nullptr;
  std::vector<int64_t> extents;
  std::string where;  // "'E[ids[t], d]' at FILE:LINE:COL"
  std::string name;
};

// A bounds check of one dimension of an affine access.
struct DimCheck {
  Affine index;
  int64_t extent = 0;
  int dim = 0;
};

struct ReduceLoop {
  int slot = 0;
  NodePtr lo, hi;
};

// An operator or function call; `integer`: integer semantics for / % ceildiv (checked for zero).
NodePtr make_call(const Expr& e, std::vector<NodePtr> args, bool integer, const std::string& file);

// A read whose flat offset is `offset`; `checks` are the dims not proven in range.
NodePtr make_affine_access(AccessInfo info, Affine offset, std::vector<DimCheck> checks,
                           NodePtr fallback);
// A read with arbitrary (data-dependent) integer indices, each checked.
NodePtr make_general_access(AccessInfo info, std::vector<int64_t> strides,
                            std::vector<NodePtr> indices, NodePtr fallback);

// A reduction (interp_reduce.cpp).
NodePtr make_reduce(ReduceOp op, std::vector<ReduceLoop> loops, NodePtr body);

// "'A[i, k]'" — an expression quoted for a message.
std::string quote_expr(const Expr& e);
std::string quote_expr_name(const std::string& name);

}  // namespace kf::te::detail
