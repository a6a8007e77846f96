// The float64 oracle: runs a checked TE program at one shape, exactly in double precision.
//
//   Expected<Program> p = compile_spec(task);
//   Expected<ShapeInstance> s = task.instantiate(task.tests[0]);
//   std::vector<std::vector<double>> in = ..., out = ...;   // task.inputs / task.outputs
//   Status st = interpret(*p, task, *s, {in[0].data(), in[1].data()}, {out[0].data()});
//
// Stages run in order; each is evaluated at every point of its index space in row-major order
// (so a recurrence's earlier elements exist when read). Each stage is compiled at the shape to a
// tree of evaluator nodes (interp_compile.h): sizes fold to constants, affine reads become strided
// loads without bounds checks where the ranges prove them, and subtrees that do not depend on the
// innermost loop around them (a softmax's row sum) are computed once per change of what they
// read.
#pragma once

#include <vector>

#include "support/status.h"
#include "task/task.h"
#include "te/ast.h"

namespace kf::te {

// inputs[i] holds task.inputs[i] widened to double (integer tensors too, exactly); outputs[j]
// receives task.outputs[j] as double. Fails (without reading out of bounds) on an index out of
// range in an access without `else` — naming the tensor, the index and the access — and on an
// integer division by zero.
Status interpret(const Program& p, const Task& task, const ShapeInstance& shape,
                 const std::vector<const double*>& inputs, const std::vector<double*>& outputs);

}  // namespace kf::te
