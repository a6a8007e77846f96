// The judge's pipeline for one candidate on one task:
//   compile → check every test shape with fresh seeds → check and time at the bench shape,
//   side by side with the task's reference → roofline → verdict.
//
//   EvalOptions opt; opt.threads = 2; opt.machine = limits_from(probe);
//   Expected<RunResult> r = evaluate(task, read_file("cand.cpp"), opt);
//   // r fails only when the *task* or the environment is broken (reference does not compile,
//   // oracle crashes, the worker cannot start); a broken candidate is a verdict in r->verdict.
//
// Invariants (DESIGN.md): the parent generates inputs, poisons outputs before every run, checks
// inputs are unchanged, compares with the f64 oracle itself, times with its own clock, and
// verifies the outputs of timed runs. Nothing an agent passes here can loosen a tolerance or
// skip a test shape: tolerances and shapes come only from the task.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "harness/backend.h"
#include "harness/machine.h"
#include "harness/run_result.h"
#include "harness/side_by_side.h"
#include "harness/toolchain.h"
#include "task/task.h"
#include "te/ast.h"

namespace kf {

// The machine's ceilings at the evaluation's thread count (from the machine probe).
struct MachineLimits {
  double peak_gflops = 0;  // fp32 FMA peak
  double dram_gbps = 0;    // STREAM-triad-like bandwidth
  double cache_gbps = 0;   // L2-resident bandwidth (bounds what any kernel can stream)
  std::string fingerprint;
};

struct EvalOptions {
  int threads = 1;
  int seeds_per_shape = 2;     // fresh random inputs per test shape (at least 2)
  uint64_t seed = 0;           // 0: draw fresh seeds; otherwise reproducible
  bool time = true;            // false: correctness only (no bench shape)
  bool time_reference = true;  // time the task's reference side by side
  bool time_baseline = false;  // also time the task's library baseline side by side
  double min_time_s = 1.0;     // measured time per solution at the bench shape
  int min_samples = 5, max_samples = 200;
  // Wall clock of the timing loop: past it, timing ends once it has 2 samples (min_samples or
  // not) and says so in Timing::stopped_early. A kernel of seconds per call gets 2 samples.
  double max_timing_wall_s = 60;
  // Timing ends after 2 samples when the candidate's fastest call is slower than this (0: off):
  // a search needs no precise time of a candidate clearly slower than its best.
  double stop_slower_than_s = 0;
  // A second solution timed side by side with the candidate, like the baseline (a search's best
  // so far, compiled with the candidate's options): vs_rival is its time over the candidate's,
  // from one run in which both saw the same inputs and the same machine. The rival was judged
  // before: its outputs are not checked again, and its time decides nothing about its verdict.
  std::string rival_source, rival_name = "rival";
  double run_timeout_s = 30;  // wall-clock deadline of one batch of kernel calls
  double oracle_timeout_s = 300;
  // The f64 oracle's time at the bench shape beyond its first run: it answers for the rotated
  // input contents every timed call is checked against (two per input base, one base per input
  // set while the budget lasts; at least one more run however slow it is).
  double bench_oracle_budget_s = 10;
  size_t memory_limit = 0;           // address space beyond the buffers; 0 = default
  double cpu_limit_s = 600;          // CPU time of one worker over its whole life (RLIMIT_CPU)
  double suspicious_fraction = 0.7;  // faster than this fraction of the roofline bound = suspicious
  CompileOptions compile;
  // The backend the candidate (and a rival) is compiled and run by; null: the CPU. The oracle,
  // the reference and the baseline are host code: the CPU backend runs them whatever this is.
  const Backend* backend = nullptr;
  // The task's parsed TE spec, as the mode loaded it (CompiledTask::program): the oracle
  // interprets it. Null: evaluate() parses the spec itself (when the task has one).
  std::shared_ptr<const te::Program> program;
  std::optional<MachineLimits> machine;
  // Called once when a candidate looks faster than `machine` allows, before it is called
  // suspicious: ceilings probed while the machine was busy are too low, so they are measured
  // again (remeasure_machine below) and the higher of the two is used. May be empty.
  std::function<std::optional<MachineLimits>()> remeasure;
  std::function<void(const std::string&)> progress;  // status lines, may be empty
  // After every round of the timing loop (may be empty): how far it is, for a live display.
  std::function<void(const TimingProgress&)> timing_progress;
  // What this measurement is for, when a caller measures one candidate more than once ("final",
  // "confirm:7"); the harness ignores it, recordings of measurements key on it.
  std::string label;
  // Where the candidate came from, for people ("builtin:tile_loops"); the harness ignores it,
  // a broker's job carries it to the worker's log.
  std::string origin;
};

// The ceilings of a probed machine at a thread count.
MachineLimits machine_limits(const MachineInfo& m, int threads);
// A `remeasure` that probes the machine again (refreshing its cached figures).
std::function<std::optional<MachineLimits>()> remeasure_machine(int threads,
                                                                const std::string& cxx);

Expected<RunResult> evaluate(const Task& task, const std::string& candidate_source,
                             const EvalOptions& options);

// The profiler's time per stage: compiles `instrumented_source` (a build with stage timers,
// generate_instrumented_kernel), runs it in a sandboxed worker at the bench shape (one warm-up
// call, then `calls` calls on one random input set) and returns, for each timed stage, the
// median over the calls of its seconds per call, as the build itself counted them. Evidence only:
// the outputs are not checked and no verdict comes of it. Fails when the source does not compile,
// the worker dies, or the build has no stage timers. Uses options.threads, compile, memory, CPU and
// run limits.
Expected<std::vector<double>> time_stages(const Task& task, const std::string& instrumented_source,
                                          int calls, const EvalOptions& options);

}  // namespace kf
