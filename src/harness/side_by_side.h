// The judge's timing loop at the bench shape: the candidate and every solution it is compared
// with (the task's reference, its baseline, a rival) are timed in rounds, one batch of each per
// round, under the same conditions.
//
//   SideBySide t = time_side_by_side(task, shape, solutions, inputs, answers, held, options);
//   if (t.failed()) verdict = t.verdict;              // the candidate's timed calls were wrong
//   t.times[0] ... t.times[i]                          // seconds per call, per round
//
// Design notes
// ------------
// Symmetry: every solution's worker has the same buffer layout and input contents, was started
// with the same CPU mask (placement.h), and gets the same treatment before its batch: its
// outputs for the batch's slots are poisoned (NaN) and its other workers are stopped. Only the
// solution whose batch runs is awake: every other timed worker and the oracle are stopped
// (Worker::pause), so none can use the machine while another is measured. The order in a round
// rotates and alternates (0 1 | 1 0 | 1 0 | 0 1 ... for two), so each solution goes first as often
// as last and follows each other one equally.
//
// Inputs: an untimed round first calls every solution on the slots the warm-ups did not use (a
// worker's first call on a slot maps its pages); then round r's batch starts at slot
// (1 + r * reps) % slots (the warm-ups used slot 0). After a solution's batch every slot it used
// switches to its other variant (bench_inputs.h): no kernel call reads the bytes its previous
// call on that slot read.
//
// Checks: after every batch, every call's outputs are checked against the oracle's answer for the
// content that call read, at a sample of elements (check_sample); only the candidate's failures
// count, the others' outputs are read alike so that the judge does the same work after every
// batch. Likewise every worker's CPU time is read before its batch and after it is stopped
// again (thread_cpu.h), and only the candidate's is judged: CPU time while it was stopped, or
// more than its grant during its calls, is a verdict (the evaluator's).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/bench_inputs.h"
#include "harness/checker.h"
#include "harness/run_result.h"
#include "harness/sandbox.h"

namespace kf {

struct TimedSolution {
  Worker* worker = nullptr;
  ShimKind kind = ShimKind::candidate;
  std::string who;  // in messages: "the candidate", "the task's reference", "the rival"
};

// The oracle's answers: [BenchInputs::index(content)][output] samples.
using OracleAnswers = std::vector<std::vector<OracleSample>>;

// How far a timing loop is, after a round: it ends once both the samples and the measured time
// reach their minimum, or when its wall clock is spent, whichever comes first.
struct TimingProgress {
  int samples = 0, min_samples = 0;
  double measured_s = 0, min_time_s = 0;
  double elapsed_s = 0, max_wall_s = 0;
  // The share done (0..1), and the seconds left at the pace so far (-1: unknown yet).
  double fraction() const;
  double left_s() const;
};

struct SideBySideOptions {
  int reps = 1;                   // calls per batch (<= slots)
  int threads = 1;                // the candidate's thread grant
  std::vector<int> granted_cpus;  // the CPUs the timed workers were started on (empty: any)
  double overhead_s = 0;          // protocol round trip, subtracted from every batch
  double run_timeout_s = 30;
  int min_samples = 5, max_samples = 200;
  double min_time_s = 1, max_timing_wall_s = 60, stop_slower_than_s = 0;
  uint64_t seed = 1;               // which sampled elements each check reads
  size_t checked_per_call = 4096;  // sampled elements checked per output per call
  // Called after every round (may be empty): what a person watching is shown.
  std::function<void(const TimingProgress&)> on_round;
};

// The candidate's CPU time (thread_cpu.h).
struct CpuUse {
  double in_batches_s = 0;       // from just before each batch to just after it was stopped again
  double wall_s = 0;             // the wall time of those batches
  double beyond_capacity_s = 0;  // more than `threads` threads could have done in them
  double escaped_s = 0;          // by threads that moved beyond the granted CPUs
  int escaped_threads = 0;
  double while_stopped_s = 0;   // between its batches, while it was stopped
  bool clocks = true;           // false: the worker's clocks could not be read
  ProcessCounters first, last;  // at the start and the end of the loop
};

struct SideBySide {
  std::vector<std::vector<double>> times;  // [solution][round]: seconds per call
  CpuUse cpu;
  std::string stopped_early;  // as Timing::stopped_early
  // The candidate's failure, when its timed calls crashed or were wrong.
  std::optional<Verdict> verdict;
  std::string message;
  std::vector<std::string> diagnostics;
  bool failed() const { return verdict.has_value(); }
};

// Times solutions[0] (the candidate) side by side with the others. held[i][s] is the content in
// slot s of solution i's worker on entry; it is kept up to date. Fails (an error, not a verdict)
// when a solution other than the candidate fails to run.
Expected<SideBySide> time_side_by_side(const Task& task, const ShapeInstance& shape,
                                       const std::vector<TimedSolution>& solutions,
                                       const BenchInputs& inputs, const OracleAnswers& answers,
                                       std::vector<std::vector<ContentId>>& held,
                                       const SideBySideOptions& options);

// The order of the solutions in round `round` (n solutions): rotated every two rounds, reversed
// in odd rounds.
std::vector<size_t> round_order(size_t n, int round);

}  // namespace kf
