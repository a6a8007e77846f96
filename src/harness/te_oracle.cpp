#include "harness/te_oracle.h"

#include <fmt/format.h>

#include <random>

#include "harness/checker.h"
#include "harness/shim.h"
#include "harness/toolchain.h"
#include "task/inputs.h"

namespace kf {

Expected<std::vector<std::vector<double>>> run_te_oracle(const te::Program& program,
                                                         const Task& task,
                                                         const ShapeInstance& shape,
                                                         const Worker& oracle) {
  std::vector<std::vector<double>> in(task.inputs.size()), out(task.outputs.size());
  std::vector<const double*> in_ptrs;
  std::vector<double*> out_ptrs;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const DType t = buffer_dtype(task, i, ShimKind::oracle);
    in[i].resize(shape.elements[i]);
    for (size_t e = 0; e < in[i].size(); ++e) in[i][e] = load_as_double(oracle.buffer(0, i), t, e);
    in_ptrs.push_back(in[i].data());
  }
  for (size_t o = 0; o < task.outputs.size(); ++o) {
    out[o].assign(shape.elements[task.inputs.size() + o], 0.0);
    out_ptrs.push_back(out[o].data());
  }
  Status st = te::interpret(program, task, shape, in_ptrs, out_ptrs);
  if (!st.ok())
    return Status::error(
        fmt::format("the TE oracle failed at {}: {}", shape.label(), st.message()));
  return out;
}

Expected<std::vector<CrossCheckRow>> cross_check_te(const Task& task, int seeds, uint64_t seed) {
  auto program = te::compile_spec(task);
  if (!program) return program.error();
  CompiledObject ref =
      compile_solution(task.reference_source, entry_shim(task, ShimKind::oracle), {});
  if (!ref.info.ok)
    return Status::error("reference.cpp does not compile as the f64 oracle:\n" + ref.info.log);
  if (seed == 0) seed = std::random_device{}();
  const Tolerance f64_agreement{.rel_l2 = 1e-10, .atol = 1e-12, .rtol = 1e-9};
  std::vector<CrossCheckRow> rows;
  for (const ShapePoint& point : task.tests) {
    auto inst = task.instantiate(point);
    if (!inst) return inst.error();
    WorkerSpec spec{.so = ref.so_path, .dims = inst->dims, .scalars = inst->scalars};
    for (size_t t = 0; t < task.tensor_count(); ++t)
      spec.layout.push_back(
          {task.tensor(t).name,
           inst->elements[t] * dtype_size(buffer_dtype(task, t, ShimKind::oracle)),
           t < task.inputs.size()});
    auto w = Worker::start(spec);
    if (!w) return w.error();
    if (auto* f = (*w)->fault()) return Status::error("the reference (oracle) " + f->message);
    for (int s = 0; s < seeds; ++s) {
      const uint64_t sd = seed + 7919 * rows.size();
      // Inputs are drawn at the task's dtype (what candidates see), then widened exactly.
      for (size_t i = 0; i < task.inputs.size(); ++i) {
        const DType dt = task.inputs[i].dtype;
        std::vector<unsigned char> raw(inst->elements[i] * dtype_size(dt));
        KF_RETURN_IF_ERROR(generate_input(task, *inst, i, sd, raw.data()));
        const DType to = buffer_dtype(task, i, ShimKind::oracle);
        for (size_t e = 0; e < inst->elements[i]; ++e)
          store_from_double((*w)->buffer(0, i), to, e, load_as_double(raw.data(), dt, e));
      }
      for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t)
        poison((*w)->buffer(0, t), buffer_dtype(task, t, ShimKind::oracle), inst->elements[t]);
      RunOutcome r = (*w)->run(0, 1, 300);
      if (!r.ok)
        return Status::error(
            fmt::format("the reference failed at {}: {}", inst->label(), r.message));
      auto te_out = run_te_oracle(*program, task, *inst, **w);
      if (!te_out) return te_out.error();
      CrossCheckRow row{.shape = inst->label(), .seed = sd, .passed = true};
      for (size_t o = 0; o < task.outputs.size(); ++o) {
        const size_t t = task.inputs.size() + o;
        CompareResult c = compare_output(task.outputs[o].name, (*w)->buffer(0, t),
                                         buffer_dtype(task, t, ShimKind::oracle),
                                         (*te_out)[o].data(), inst->extents[t], f64_agreement);
        row.rel_l2 = std::max(row.rel_l2, c.rel_l2);
        if (!c.passed && row.passed) {
          row.passed = false;
          row.detail = "reference vs TE: " + c.detail;
        }
      }
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace kf
