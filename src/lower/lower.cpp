#include "lower/lower.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "ir/ir_printer.h"
#include "ir/simplify.h"
#include "ir/unroll_loops.h"
#include "ir/vectorize_loops.h"
#include "lower/guards_to_bounds.h"
#include "lower/inline_stages.h"
#include "lower/page_loops.h"
#include "lower/prefetch.h"
#include "lower/realize.h"
#include "lower/simplify_indices.h"
#include "lower/specialize_uniform.h"
#include "lower/transpose_copies.h"
#include "schedule/pipeline.h"
#include "schedule/primitives.h"
#include "te/compile.h"

namespace kf {
namespace {

// The work bounds of lowering (lower.h, "Bounds"). Passes such as simplify and realize grow
// faster than linearly in the depth of a loop nest and the size of an expression, so the sizes
// they receive are bounded before they run, and the clock is read between steps.
constexpr size_t kMaxScheduleSteps = 1000;
constexpr size_t kMaxStages = 256;
constexpr size_t kMaxLoopsPerStage = 32;
constexpr size_t kMaxSplitsPerStage = 64;
constexpr double kMaxInlinedNodes = 1e5;
constexpr double kMaxInlinedHeight = 512;

class Budget {
 public:
  explicit Budget(double seconds) : seconds_(seconds), start_(std::chrono::steady_clock::now()) {}
  // Fails once the deadline has passed; `step` names what was just done.
  Status check(const std::string& step) const {
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (seconds_ > 0 && s > seconds_)
      return Status::error(
          fmt::format("lowering ran past its deadline of {:g} s (at {})", seconds_, step));
    return ok_status();
  }

 private:
  double seconds_;
  std::chrono::steady_clock::time_point start_;
};

Status check_pipeline_size(const sched::Pipeline& p) {
  if (p.stages.size() > kMaxStages)
    return Status::error(fmt::format("the pipeline has {} stages; at most {} are lowered",
                                     p.stages.size(), kMaxStages));
  for (const sched::Stage& st : p.stages) {
    if (st.loops.size() > kMaxLoopsPerStage)
      return Status::error(fmt::format("stage {} has {} loops; at most {} are lowered", st.name,
                                       st.loops.size(), kMaxLoopsPerStage));
    if (st.splits.size() > kMaxSplitsPerStage)
      return Status::error(fmt::format("stage {} has {} splits and fuses; at most {} are lowered",
                                       st.name, st.splits.size(), kMaxSplitsPerStage));
  }
  return ok_status();
}

// Upper bounds on an expression's node count and height once the inlined stages it reads are
// substituted: a read of an inlined stage becomes its body with each index variable replaced by
// the read's index expression (at most the largest one per node), plus, for a read with `else`,
// a bounds check per index (each index twice and a few nodes) and the else value.
struct ExprSize {
  double nodes = 0, height = 0;
};

ExprSize inlined_size(const te::Expr& e, const sched::Pipeline& p,
                      const std::vector<ExprSize>& stage_size) {
  ExprSize args, largest;
  for (const te::Expr& a : e.args) {
    const ExprSize x = inlined_size(a, p, stage_size);
    args.nodes = std::min(args.nodes + x.nodes, 1e300);
    args.height = std::max(args.height, x.height);
    largest.nodes = std::max(largest.nodes, x.nodes);
  }
  const int t = e.ref.index;
  if (e.kind == te::ExprKind::access && e.ref.kind == te::RefKind::stage && t >= 0 &&
      static_cast<size_t>(t) < stage_size.size() &&
      p.stages[static_cast<size_t>(t)].compute.kind == sched::ComputeKind::inlined) {
    const ExprSize& body = stage_size[static_cast<size_t>(t)];
    double nodes = body.nodes * std::max(1.0, largest.nodes);
    if (e.has_else) nodes += 2 * args.nodes + 8 * static_cast<double>(e.args.size());
    return {std::min(nodes, 1e300), body.height + args.height + 3};
  }
  return {args.nodes + 1, args.height + 1};
}

// compute_inline substitutes bodies into their readers: a chain of stages that each read the one
// before twice doubles at every step. Refused before inline_stages builds it.
Status check_inlined_size(const sched::Pipeline& p) {
  std::vector<ExprSize> size;
  for (const sched::Stage& st : p.stages) {
    ExprSize total = inlined_size(st.body, p, size);
    auto add = [&](const te::Expr& e) {
      const ExprSize x = inlined_size(e, p, size);
      total = {std::min(total.nodes + x.nodes, 1e300), std::max(total.height, x.height)};
    };
    if (st.where) add(*st.where);
    for (const te::IndexVar& v : st.reduce_vars) {
      add(v.lo);
      add(v.hi);
    }
    if (total.nodes > kMaxInlinedNodes || total.height > kMaxInlinedHeight)
      return Status::error(fmt::format(
          "stage {} would have {:.3g} expression nodes nested {:.0f} deep once the stages it "
          "reads are inlined; at most {:.0f} nodes and {:.0f} levels are lowered",
          st.name, total.nodes, total.height, kMaxInlinedNodes, kMaxInlinedHeight));
    size.push_back(total);
  }
  return ok_status();
}

// apply_schedule, one primitive at a time under the bounds.
Status apply_bounded(sched::Pipeline& p, const sched::Schedule& schedule, const Budget& budget) {
  if (schedule.steps.size() > kMaxScheduleSteps)
    return Status::error(fmt::format("{}: the schedule has {} steps; at most {} are lowered",
                                     schedule.file, schedule.steps.size(), kMaxScheduleSteps));
  for (const sched::Primitive& prim : schedule.steps) {
    const std::string where = schedule.file + ":" + std::to_string(prim.line);
    Status s = sched::apply_primitive(p, prim);
    if (s.ok()) s = check_pipeline_size(p);
    if (s.ok()) s = budget.check("'" + prim.to_string() + "'");
    if (!s.ok()) return Status::error(where + ": " + s.message());
  }
  return ok_status();
}

}  // namespace

Expected<ir::LoweredFunc> lower(const Task& task, const te::Program& program,
                                const sched::Schedule& schedule, const LowerOptions& options) {
  const Budget budget(options.deadline_s);
  auto dump = [&](const std::string& pass, const std::string& text) {
    if (options.dump) options.dump(pass, text);
  };
  auto dump_ir = [&](const std::string& pass, const ir::Stmt& s) {
    if (options.dump) options.dump(pass, ir::to_string(s));
  };

  sched::Pipeline p = sched::make_pipeline(program, task);
  dump("make_pipeline", p.to_string());
  KF_RETURN_IF_ERROR(check_pipeline_size(p));

  KF_RETURN_IF_ERROR(apply_bounded(p, schedule, budget));
  dump("apply_schedule", p.to_string());

  KF_RETURN_IF_ERROR(check_inlined_size(p));
  p = lowering::inline_stages(p);
  dump("inline_stages", p.to_string());
  KF_RETURN_IF_ERROR(budget.check("inline_stages"));

  lowering::RealizeOptions ro;
  ro.lanes_f32 = preferred_lanes(options.target, ir::ScalarKind::f32);
  ro.lanes_f64 = preferred_lanes(options.target, ir::ScalarKind::f64);
  ir::Stmt s = lowering::realize_stages(p, ro);
  dump_ir("realize_stages", s);
  KF_RETURN_IF_ERROR(budget.check("realize_stages"));

  s = lowering::insert_prefetches(s, p, ro.lanes_f32);
  dump_ir("insert_prefetches", s);

  s = ir::simplify(s);
  dump_ir("simplify", s);
  KF_RETURN_IF_ERROR(budget.check("simplify"));

  std::set<std::string> paged, dims;
  for (const sched::Stage& st : p.stages)
    if (st.hoist_gathers) paged.insert(st.name);
  dims.insert(task.dims.begin(), task.dims.end());
  s = lowering::page_loops(s, paged, dims);
  dump_ir("page_loops", s);

  lowering::TransposeOptions to{.lanes = ro.lanes_f32, .f32_params = {}};
  for (const auto* list : {&task.inputs, &task.outputs})
    for (const TensorSpec& t : *list)
      if (t.dtype == DType::f32) to.f32_params.insert(t.name);
  s = lowering::transpose_copies(s, to);
  dump_ir("transpose_copies", s);

  s = ir::unroll_loops(s);
  dump_ir("unroll_loops", s);

  s = ir::vectorize_loops(s);
  dump_ir("vectorize_loops", s);
  KF_RETURN_IF_ERROR(budget.check("vectorize_loops"));

  s = ir::simplify(s);
  dump_ir("simplify", s);

  s = lowering::simplify_indices(s);
  dump_ir("simplify_indices", s);

  s = lowering::guards_to_bounds(s);
  dump_ir("guards_to_bounds", s);
  KF_RETURN_IF_ERROR(budget.check("guards_to_bounds"));

  std::set<std::string> uniform;
  for (const sched::Stage& st : p.stages)
    for (const sched::Loop& l : st.loops)
      if (l.uniform) uniform.insert(st.name + "." + l.name);
  s = lowering::specialize_uniform(s, uniform);
  dump_ir("specialize_uniform", s);

  ir::LoweredFunc f{task.function, ir::params_from_task(task), s};
  for (const sched::Stage& st : p.stages)
    if (st.nontemporal && st.output >= 0)
      f.nontemporal.insert(task.outputs[static_cast<size_t>(st.output)].name);
  return f;
}

namespace {

Expected<GeneratedCpp> generate(const Task& task, const te::Program& program,
                                const sched::Schedule& schedule, const LowerOptions& options,
                                const CodegenOptions& codegen) {
  auto f = lower(task, program, schedule, options);
  if (!f) return f.error();
  std::string head = std::string(kGeneratedHeader) + schedule.hash() + "\n";
  head += "// Generated by kforge from the TE spec of task " + task.name + " (target " +
          to_string(options.target) + "), schedule";
  if (schedule.empty()) {
    head += ": default (every stage at root, loops in order)\n";
  } else {
    head += (schedule.file.empty() ? "" : " " + schedule.file) + ":\n";
    for (const sched::Primitive& prim : schedule.steps) head += "//   " + prim.to_string() + "\n";
  }
  GeneratedCpp out = codegen_cpp(*f, options.target, codegen);
  out.source = head + out.source;
  return out;
}

}  // namespace

Expected<std::string> generate_kernel(const Task& task, const te::Program& program,
                                      const sched::Schedule& schedule,
                                      const LowerOptions& options) {
  auto g = generate(task, program, schedule, options, {});
  if (!g) return g.error();
  return std::move(g->source);
}

Expected<std::string> generate_kernel(const Task& task, const sched::Schedule& schedule,
                                      const LowerOptions& options) {
  auto program = te::compile_spec(task);
  if (!program) return program.error();
  return generate_kernel(task, *program, schedule, options);
}

Expected<GeneratedCpp> generate_instrumented_kernel(const Task& task, const te::Program& program,
                                                    const sched::Schedule& schedule,
                                                    const LowerOptions& options) {
  return generate(task, program, schedule, options, CodegenOptions{.stage_timers = true});
}

}  // namespace kf
