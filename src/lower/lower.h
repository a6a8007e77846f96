// Lowering: a task's TE program plus a schedule → an IR function with the task's signature →
// C++ source that the judge compiles and checks like any candidate.
//
//   Expected<sched::Schedule> s = sched::parse_schedule(text, "gemm.sched");
//   Expected<std::string> src = generate_kernel(task, *s, {});   // "// kforge: schedule-hash ..."
//   Expected<RunResult> r = evaluate(task, *src, eval_options);
//
// The pipeline (lower.cpp, read top to bottom; each pass is one file with one function, and
// options.dump sees the IR after every pass):
//   make_pipeline      TE program → stages (reductions inside expressions become stages)
//   apply_schedule     the trace's primitives, each checked for legality
//   inline_stages      compute_inline stages substituted into their readers
//   realize_stages     loop nests, tails, compute_at placement with bounds inference, buffers
//   insert_prefetches  prefetches for loops the schedule gives a prefetch distance
//   simplify           constant folding
//   page_loops         loops around hoist_gathers stages' page-table reads run by pages
//   transpose_copies   copy nests that transpose (packed panels) become register-transposed blocks
//   unroll_loops       unrolled loops replicated
//   vectorize_loops    vectorized loops turned into vector code (predicated tails)
//   simplify
//   simplify_indices   linear index arithmetic cancelled (register tiles get constant indices)
//   guards_to_bounds   a loop whose whole body is a guard on its own variable gets it as bound
// then codegen_cpp. The default schedule (an empty trace) computes every stage at root, loops in
// LHS order with reductions innermost, intermediates in heap buffers.
//
// Bounds: a schedule is untrusted text (a brain's or a person's), and several passes grow faster
// than linearly in a nest's depth or an expression's size, so lowering refuses, with an error
// that names the schedule line or the stage, a schedule of more than 1000 steps, a pipeline of
// more than 256 stages, a stage with more than 32 loops or 64 splits and fuses, and a stage whose
// expression would exceed 100000 nodes or 512 levels once compute_inline stages are substituted;
// it also reads the clock after every primitive and the costly passes and fails past
// LowerOptions::deadline_s.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "codegen/codegen_cpp.h"
#include "ir/ir.h"
#include "schedule/trace.h"
#include "support/status.h"
#include "task/task.h"
#include "te/ast.h"

namespace kf {

struct LowerOptions {
  CodegenTarget target = CodegenTarget::avx512;
  // The debug dump: called after each pass with the pass's name and the IR (or pipeline) text.
  std::function<void(const std::string& pass, const std::string& text)> dump;
  // Lowering fails once it has run this long (<= 0: no deadline).
  double deadline_s = 30;
};

// Fails with "FILE:LINE: ..." when a primitive of the schedule is illegal for this program.
Expected<ir::LoweredFunc> lower(const Task& task, const te::Program& program,
                                const sched::Schedule& schedule, const LowerOptions& options);

// lower + codegen_cpp of the task's parsed TE spec (`program`, as CompiledTask keeps it), with a
// header comment that names the task and carries `// kforge: schedule-hash HASH` and the
// schedule itself. Fails when the schedule is illegal.
Expected<std::string> generate_kernel(const Task& task, const te::Program& program,
                                      const sched::Schedule& schedule, const LowerOptions& options);
// The same for a task whose spec is not parsed yet (one-off callers: `kforge lower`). Fails also
// when the task has no TE spec or the spec does not compile.
Expected<std::string> generate_kernel(const Task& task, const sched::Schedule& schedule,
                                      const LowerOptions& options);

// The first line of every kernel generate_kernel writes starts with this.
inline constexpr std::string_view kGeneratedHeader = "// kforge: schedule-hash ";

// The profiler's instrumented build of the same kernel: generate_kernel's code with stage
// timers (CodegenOptions::stage_timers), and the names of the timed stages.
Expected<GeneratedCpp> generate_instrumented_kernel(const Task& task, const te::Program& program,
                                                    const sched::Schedule& schedule,
                                                    const LowerOptions& options);

}  // namespace kf
