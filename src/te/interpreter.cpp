// The float64 oracle's driver: buffers, stage loops, errors (see interpreter.h).
#include "te/interpreter.h"

#include <algorithm>

#include "te/interp_compile.h"

namespace kf::te {
namespace {

using detail::Frame;
using detail::Node;

// Evaluates `body` at every point of `ext` (row-major) into `out`, from dimension `d` on, a row
// at a time unless `by_element` (a recurrence along the last dimension reads the row it writes).
void run_points(Frame& f, Node& body, const std::vector<int64_t>& ext, size_t d, double*& out,
                bool by_element) {
  int64_t& s = f.slots[d];
  if (d + 1 == ext.size() && by_element) {
    for (s = 0; s < ext[d] && !f.failed; ++s) *out++ = body.eval(f);
    return;
  }
  if (d + 1 == ext.size()) {
    for (int64_t start = 0; start < ext[d] && !f.failed; start += detail::kRowChunk) {
      const int64_t n = std::min(detail::kRowChunk, ext[d] - start);
      s = start;
      body.eval_row(f, static_cast<int>(d), n, out);
      out += n;
    }
    return;
  }
  for (s = 0; s < ext[d] && !f.failed; ++s) run_points(f, body, ext, d + 1, out, by_element);
}

}  // namespace

Status interpret(const Program& p, const Task& task, const ShapeInstance& shape,
                 const std::vector<const double*>& inputs, const std::vector<double*>& outputs) {
  KF_CHECK(inputs.size() == task.inputs.size()) << "interpret: " << inputs.size() << " inputs";
  KF_CHECK(outputs.size() == task.outputs.size()) << "interpret: " << outputs.size() << " outputs";
  detail::CompileEnv env{p, shape, {}, {}};
  for (size_t i = 0; i < task.inputs.size(); ++i)
    env.inputs.push_back({task.inputs[i].name, inputs[i], shape.extents[i]});
  std::vector<std::vector<double>> scratch(p.stages.size());
  env.stages.resize(p.stages.size());
  for (size_t si = 0; si < p.stages.size(); ++si) {
    const Stage& st = p.stages[si];
    auto ext = detail::stage_extents(env, static_cast<int>(si));
    if (!ext) return ext.error().with_context("stage " + st.name + " at " + shape.label());
    size_t n = 1;
    for (int64_t e : *ext) n *= static_cast<size_t>(e);
    double* data = nullptr;
    if (st.output >= 0) {
      KF_CHECK(n == shape.elements[task.inputs.size() + st.output])
          << "stage " << st.name << " has " << n << " elements, its output "
          << shape.elements[task.inputs.size() + st.output];
      data = outputs[st.output];
    } else {
      scratch[si].assign(n, 0.0);
      data = scratch[si].data();
    }
    env.stages[si] = {st.name, data, *ext};
    auto body = detail::compile_stage(env, static_cast<int>(si));
    if (!body) return body.error().with_context("stage " + st.name + " at " + shape.label());
    Frame f;
    f.slots.assign(st.vars.size() + st.reduce_vars.size(), 0);
    if (n == 0) continue;
    double* out = data;
    if (ext->empty()) {
      *out = (*body)->eval(f);
    } else {
      const bool by_element = st.scan_dim == static_cast<int>(ext->size()) - 1;
      run_points(f, **body, *ext, 0, out, by_element);
    }
    if (f.failed) return Status::error("at " + shape.label() + ": " + f.error);
  }
  return ok_status();
}

}  // namespace kf::te
