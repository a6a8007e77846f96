// Compiles a checked stage into an evaluator tree (interp_nodes.h) at one shape: sizes, dims and
// scalars become constants, tensor reads with affine indices become strided loads whose bounds
// checks are dropped when the index ranges prove them, and invariant subtrees are memoized.
// Internal to src/te; interpreter.cpp is the user.
#pragma once

#include <string>
#include <vector>

#include "support/status.h"
#include "task/task.h"
#include "te/ast.h"
#include "te/interp_nodes.h"

namespace kf::te::detail {

struct TensorView {
  std::string name;
  const double* data = nullptr;
  std::vector<int64_t> extents;
};

struct CompileEnv {
  const Program& program;
  const ShapeInstance& shape;
  std::vector<TensorView> inputs;
  std::vector<TensorView> stages;  // every stage's buffer (filled before compiling a stage)
};

// The static extents of stage `si` (its LHS vars' hi at this shape).
Expected<std::vector<int64_t>> stage_extents(const CompileEnv& env, int si);

// The body of stage `si`, evaluated with the stage's LHS vars in slots 0..vars-1.
Expected<NodePtr> compile_stage(const CompileEnv& env, int si);

}  // namespace kf::te::detail
