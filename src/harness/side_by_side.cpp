#include "harness/side_by_side.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "harness/thread_cpu.h"

namespace kf {

double TimingProgress::fraction() const {
  // The loop ends when both minimums are reached: the lagging one says how far it is.
  const double natural = std::min(min_samples > 0 ? double(samples) / min_samples : 1.0,
                                  min_time_s > 0 ? measured_s / min_time_s : 1.0);
  const double by_wall = max_wall_s > 0 ? elapsed_s / max_wall_s : 0.0;
  return std::clamp(std::max(natural, by_wall), 0.0, 1.0);
}

double TimingProgress::left_s() const {
  const double f = fraction();
  if (f <= 0 || elapsed_s <= 0) return -1;
  const double left = elapsed_s * (1 - f) / f;
  return max_wall_s > 0 ? std::min(left, std::max(0.0, max_wall_s - elapsed_s)) : left;
}
namespace {

using Clock = std::chrono::steady_clock;

Tolerance tolerance_of(const Task& task, size_t tensor) {
  const TensorSpec& spec = task.tensor(tensor);
  return is_floating(spec.dtype) ? task.tolerance_for(spec.dtype) : Tolerance{};
}

// The loop's state across rounds.
class Loop {
 public:
  Loop(const Task& task, const ShapeInstance& shape, const std::vector<TimedSolution>& solutions,
       const BenchInputs& inputs, const OracleAnswers& answers,
       std::vector<std::vector<ContentId>>& held, const SideBySideOptions& o)
      : task_(task),
        shape_(shape),
        sol_(solutions),
        inputs_(inputs),
        answers_(answers),
        held_(held),
        o_(o) {
    out_.times.assign(solutions.size(), {});
    for (size_t i = 0; i < solutions.size(); ++i)
      ledgers_.push_back(std::make_unique<CpuLedger>(o.threads, o.granted_cpus));
  }

  Expected<SideBySide> run();

 private:
  // One batch of solution i: `reps` calls from slot `first`; a timed one is recorded and its CPU
  // time counted.
  Status batch(size_t i, int first, int reps, bool timed);
  // Checks solution i's outputs of a batch; only the candidate's failures count (the others'
  // outputs are read the same way, so the judge's work between batches is the same for all).
  void check_calls(size_t i, int first, int reps);
  void fail(Verdict v, std::string message, std::vector<std::string> diags = {}) {
    if (out_.failed()) return;
    out_.verdict = v;
    out_.message = std::move(message);
    out_.diagnostics = std::move(diags);
  }

  const Task& task_;
  const ShapeInstance& shape_;
  const std::vector<TimedSolution>& sol_;
  const BenchInputs& inputs_;
  const OracleAnswers& answers_;
  std::vector<std::vector<ContentId>>& held_;
  const SideBySideOptions& o_;
  SideBySide out_;
  // Every solution's CPU time is read the same way; only the candidate's decides anything.
  std::vector<std::unique_ptr<CpuLedger>> ledgers_;
  uint64_t checks_ = 0;
};

Status Loop::batch(size_t i, int first, int reps, bool timed) {
  Worker& w = *sol_[i].worker;
  const int k = inputs_.slots();
  for (int j = 0; j < reps; ++j) {
    const int s = (first + j) % k;
    for (size_t t = task_.inputs.size(); t < task_.tensor_count(); ++t)
      poison(w.buffer(s, t), buffer_dtype(task_, t, sol_[i].kind), shape_.elements[t]);
  }
  const bool cand = i == 0;
  CpuLedger& ledger = *ledgers_[i];
  if (timed)
    ledger.begin(w.pid());
  else
    ledger.begin_other(w.pid());
  RunOutcome r = w.run(first, reps, o_.run_timeout_s);
  w.pause();
  if (!timed) ledger.end_other();
  if (!r.ok) {
    if (!cand)
      return Status::error(fmt::format("{} failed during timing: {}", sol_[i].who, r.message));
    fail(r.verdict, fmt::format("during timing at {}: {}", shape_.label(), r.message));
    return ok_status();
  }
  if (timed) {
    out_.times[i].push_back(std::max(r.seconds - o_.overhead_s, 0.0) / reps);
    ledger.end(w.pid(), r.seconds);
  }
  check_calls(i, first, reps);
  // Every slot this batch read switches variant: the next call on it reads other bytes.
  for (int j = 0; j < reps; ++j) {
    const int s = (first + j) % k;
    ContentId& c = held_[i][static_cast<size_t>(s)];
    const ContentId next = inputs_.other_variant(c);
    inputs_.switch_content(w, sol_[i].kind, s, c, next);
    c = next;
  }
  return ok_status();
}

void Loop::check_calls(size_t i, int first, int reps) {
  const Worker& w = *sol_[i].worker;
  for (int j = 0; j < reps && !out_.failed(); ++j) {
    const int s = (first + j) % inputs_.slots();
    const ContentId c = held_[i][static_cast<size_t>(s)];
    for (size_t t = task_.inputs.size(); t < task_.tensor_count(); ++t) {
      const TensorSpec& spec = task_.tensor(t);
      const OracleSample& want =
          answers_[static_cast<size_t>(BenchInputs::index(c))][t - task_.inputs.size()];
      std::string bad = check_sample(
          spec.name, w.buffer(s, t), spec.dtype, want, shape_.extents[t], tolerance_of(task_, t),
          o_.seed + 0x9e3779b97f4a7c15ull * ++checks_, o_.checked_per_call);
      if (bad.empty() || i != 0) continue;
      return fail(Verdict::wrong_answer,
                  fmt::format("the output of a timed call at {} is wrong (input set {}, {}): {}",
                              shape_.label(), s, c.variant ? "patched" : "as drawn", bad),
                  {"every timed call reads an input set other than the previous call's, and its "
                   "output is checked against the oracle's answer for that set at sampled "
                   "elements: a kernel must compute every call from its inputs"});
    }
  }
}

Expected<SideBySide> Loop::run() {
  for (const TimedSolution& s : sol_) s.worker->pause();
  std::vector<double>& times = out_.times[0];
  // An untimed round over the slots the warm-ups did not use (slot 0): the first call on a slot
  // maps its pages into the worker, which is no part of the kernel's time.
  const int k = inputs_.slots();
  for (size_t i : round_order(sol_.size(), 0)) {
    if (k < 2) break;
    auto st = batch(i, 1, k - 1, false);
    if (!st.ok()) return st;
    if (out_.failed()) return std::move(out_);
  }
  out_.cpu.first = sol_[0].worker->counters();
  for (size_t i = 0; i < sol_.size(); ++i) ledgers_[i]->watch(sol_[i].worker->pid());
  double measured = 0;
  const auto wall_start = Clock::now();
  for (int round = 0; static_cast<int>(times.size()) < o_.max_samples; ++round) {
    const int first = (1 + round * o_.reps) % inputs_.slots();
    for (size_t i : round_order(sol_.size(), round)) {
      auto st = batch(i, first, o_.reps, true);
      if (!st.ok()) return st;
      if (out_.failed()) return std::move(out_);
    }
    measured += times.back() * o_.reps;
    const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
    const int n = static_cast<int>(times.size());
    if (o_.on_round)
      o_.on_round({.samples = n,
                   .min_samples = o_.min_samples,
                   .measured_s = measured,
                   .min_time_s = o_.min_time_s,
                   .elapsed_s = wall,
                   .max_wall_s = o_.max_timing_wall_s});
    if (n >= o_.min_samples && measured >= o_.min_time_s) break;
    // Two samples at least: one call can be disturbed, the faster of two rarely is by much.
    const int enough = std::min(2, o_.min_samples);
    if (n >= enough && wall >= o_.max_timing_wall_s) {
      if (n < o_.min_samples || measured < o_.min_time_s)
        out_.stopped_early = fmt::format("{} samples: the timing loop's {:.0f} s were spent", n,
                                         o_.max_timing_wall_s);
      break;
    }
    const double fastest = *std::min_element(times.begin(), times.end());
    if (n >= enough && o_.stop_slower_than_s > 0 && fastest > o_.stop_slower_than_s) {
      out_.stopped_early = fmt::format(
          "{} samples: the fastest ({:.3f} ms) is slower than the {:.3f} ms it had to beat", n,
          fastest * 1e3, o_.stop_slower_than_s * 1e3);
      break;
    }
  }
  out_.cpu.last = sol_[0].worker->counters();
  for (size_t i = 0; i < sol_.size(); ++i) ledgers_[i]->watch(sol_[i].worker->pid());
  const CpuLedger& ledger = *ledgers_[0];
  out_.cpu.in_batches_s = ledger.in_batches_s();
  out_.cpu.wall_s = ledger.wall_s();
  out_.cpu.beyond_capacity_s = ledger.beyond_capacity_s();
  out_.cpu.escaped_s = ledger.escaped_s();
  out_.cpu.escaped_threads = ledger.escaped_threads();
  out_.cpu.while_stopped_s = ledger.while_stopped_s();
  out_.cpu.clocks = ledger.ok();
  return std::move(out_);
}

}  // namespace

std::vector<size_t> round_order(size_t n, int round) {
  std::vector<size_t> order(n);
  if (n == 0) return order;
  const size_t shift = static_cast<size_t>(round / 2) % n;
  for (size_t i = 0; i < n; ++i) order[i] = (i + shift) % n;
  if (round % 2 == 1) std::reverse(order.begin(), order.end());
  return order;
}

Expected<SideBySide> time_side_by_side(const Task& task, const ShapeInstance& shape,
                                       const std::vector<TimedSolution>& solutions,
                                       const BenchInputs& inputs, const OracleAnswers& answers,
                                       std::vector<std::vector<ContentId>>& held,
                                       const SideBySideOptions& options) {
  KF_CHECK(!solutions.empty() && held.size() == solutions.size());
  KF_CHECK(options.reps >= 1 && options.reps <= inputs.slots());
  Loop loop(task, shape, solutions, inputs, answers, held, options);
  return loop.run();
}

}  // namespace kf
