#include "harness/evaluator.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "harness/checker.h"
#include "harness/sandbox.h"
#include "harness/shim.h"
#include "harness/te_oracle.h"
#include "harness/timer.h"
#include "support/fs.h"
#include "support/hash.h"
#include "task/inputs.h"

namespace kf {
namespace {

using Clock = std::chrono::steady_clock;

// A solution compiled for one role: the candidate, the f64 oracle, or the reference baseline.
struct Solution {
  std::string so;
  ShimKind kind;
};

std::vector<BufferSpec> layout_for(const Task& task, const ShapeInstance& inst, ShimKind kind) {
  std::vector<BufferSpec> out;
  for (size_t t = 0; t < task.tensor_count(); ++t)
    out.push_back({task.tensor(t).name, inst.elements[t] * dtype_size(buffer_dtype(task, t, kind)),
                   t < task.inputs.size()});
  return out;
}

Expected<std::unique_ptr<Worker>> start_worker(const Task& task, const ShapeInstance& inst,
                                               const Solution& s, int sets,
                                               const EvalOptions& o) {
  WorkerSpec spec{.so = s.so,
                  .layout = layout_for(task, inst, s.kind),
                  .sets = sets,
                  .dims = inst.dims,
                  .scalars = inst.scalars,
                  .threads = o.threads,
                  .start_timeout_s = 60,
                  .memory_limit = o.memory_limit,
                  .cpu_limit_s = o.cpu_limit_s,
                  .preload = s.kind == ShimKind::candidate ? runtime_preload(o.compile.cxx)
                                                           : std::vector<std::string>{}};
  return Worker::start(spec);
}

// Draws input set `set` of `w` from `seed`.
Status fill_inputs(const Task& task, const ShapeInstance& inst, Worker& w, int set, uint64_t seed) {
  for (size_t i = 0; i < task.inputs.size(); ++i)
    KF_RETURN_IF_ERROR(generate_input(task, inst, i, seed, w.buffer(set, i)));
  return ok_status();
}

// Copies the inputs of `src` (task dtypes) into `dst`, widening floating tensors if `dst` is the
// oracle (f64).
void copy_inputs(const Task& task, const ShapeInstance& inst, const Worker& src, int src_set,
                 Worker& dst, int dst_set, ShimKind dst_kind) {
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const DType from = task.inputs[i].dtype, to = buffer_dtype(task, i, dst_kind);
    if (from == to) {
      std::memcpy(dst.buffer(dst_set, i), src.buffer(src_set, i), src.bytes(i));
      continue;
    }
    for (size_t e = 0; e < inst.elements[i]; ++e)
      store_from_double(dst.buffer(dst_set, i), to, e, load_as_double(src.buffer(src_set, i), from, e));
  }
}

void poison_outputs(const Task& task, const ShapeInstance& inst, Worker& w, int set, ShimKind kind) {
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t)
    poison(w.buffer(set, t), buffer_dtype(task, t, kind), inst.elements[t]);
}

std::string inputs_hash(const Task& task, const Worker& w) {
  Hasher h;
  for (int s = 0; s < w.sets(); ++s)
    for (size_t i = 0; i < task.inputs.size(); ++i)
      h.add(std::string_view(static_cast<const char*>(w.buffer(s, i)), w.bytes(i)));
  return h.hex();
}

std::string outputs_snapshot(const Task& task, const Worker& w, int set) {
  std::string s;
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t)
    s.append(static_cast<const char*>(w.buffer(set, t)), w.bytes(t));
  return s;
}

// The oracle's outputs as f64 arrays, one per task output.
using OracleOutputs = std::vector<const double*>;

OracleOutputs worker_outputs(const Task& task, const Worker& oracle) {
  OracleOutputs out;
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t)
    out.push_back(static_cast<const double*>(oracle.buffer(0, t)));
  return out;
}

// Compares every output of set `set` of `w` with the oracle's.
CompareResult compare_outputs(const Task& task, const ShapeInstance& inst, const Worker& w, int set,
                              const OracleOutputs& want) {
  CompareResult total;
  for (size_t t = task.inputs.size(); t < task.tensor_count(); ++t) {
    const TensorSpec& spec = task.tensor(t);
    const Tolerance tol = is_floating(spec.dtype) ? task.tolerance_for(spec.dtype) : Tolerance{};
    CompareResult r = compare_output(spec.name, w.buffer(set, t), spec.dtype,
                                     want[t - task.inputs.size()], inst.extents[t], tol);
    total.rel_l2 = std::max(total.rel_l2, r.rel_l2);
    total.max_abs_err = std::max(total.max_abs_err, r.max_abs_err);
    total.worst_ratio = std::max(total.worst_ratio, r.worst_ratio);
    if (total.worst.empty()) total.worst = r.worst;
    if (!r.passed && total.passed) {
      total.passed = false;
      total.detail = r.detail;
      total.worst = r.worst;
    }
  }
  return total;
}

class Judge {
 public:
  Judge(const Task& task, const EvalOptions& o, RunResult& res, const te::Program* program)
      : task_(task), o_(o), res_(res), program_(program) {
    seed_ = o.seed ? o.seed : std::random_device{}() * 0x100000001ull + std::random_device{}();
  }

  // Returns true while the candidate is still in good standing.
  bool failed() const { return failed_; }

  void fail(Verdict v, const std::string& message, std::vector<std::string> diags = {}) {
    if (failed_) return;
    failed_ = true;
    res_.verdict = v;
    res_.message = message;
    for (auto& d : diags) res_.diagnostics.push_back(std::move(d));
  }

  void note(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }

  uint64_t next_seed() { return seed_ + 0x9e3779b97f4a7c15ull * ++seed_count_; }

  // After a run of the candidate: inputs intact, nothing written outside its outputs, and
  // outputs that stay put after the kernel returned.
  void check_side_effects(const ShapeInstance& inst, Worker& w, const std::string& input_hash,
                          int set, double run_s, const std::string& where) {
    if (failed_) return;
    if (inputs_hash(task_, w) != input_hash)
      return fail(Verdict::forbidden, fmt::format("{}: the candidate modified an input buffer", where),
                  {"inputs are read-only: every input buffer is hashed before the run and "
                   "compared after it"});
    std::string which;
    if (!w.canaries_intact(&which))
      return fail(Verdict::forbidden,
                  fmt::format("{}: the candidate wrote outside its outputs (next to '{}')",
                              where, which));
    std::string before = outputs_snapshot(task_, w, set);
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(0.002 + 2 * run_s, 0.2)));
    if (outputs_snapshot(task_, w, set) != before)
      fail(Verdict::forbidden,
           fmt::format("{}: outputs changed after the kernel returned", where),
           {"work was left running (e.g. in a background thread) after the call returned; a "
            "kernel must finish before it returns"});
    (void)inst;
  }

  // Starts the candidate's worker (`sets` input sets) and the oracle's at one shape. False, with
  // the verdict recorded, when the candidate dies while loading; an error when the oracle does.
  Expected<bool> start_workers(const ShapeInstance& inst, const Solution& cand,
                               const Solution& oracle, int sets, std::unique_ptr<Worker>* cw,
                               std::unique_ptr<Worker>* ow) {
    auto c = start_worker(task_, inst, cand, sets, o_);
    if (!c) return c.error();
    if (auto* f = (*c)->fault()) {
      fail(f->verdict, f->message);
      return false;
    }
    auto o = start_worker(task_, inst, oracle, 1, o_);
    if (!o) return o.error();
    if (auto* f = (*o)->fault()) return Status::error("the task's reference (oracle) " + f->message);
    *cw = std::move(*c);
    *ow = std::move(*o);
    return true;
  }

  Expected<bool> check_test_shapes(const Solution& cand, const Solution& oracle);
  Expected<bool> bench(const Solution& cand, const Solution& oracle,
                       const std::optional<Solution>& reference,
                       const std::optional<Solution>& baseline,
                       const std::optional<Solution>& rival);

 private:
  void record(const ShapeInstance& inst, uint64_t seed, const CompareResult& c, bool timed) {
    res_.checks.push_back({.shape = inst.label(),
                           .seed = seed,
                           .passed = c.passed,
                           .timed = timed,
                           .rel_l2 = c.rel_l2,
                           .max_abs_err = c.max_abs_err,
                           .worst_ratio = c.worst_ratio,
                           .worst = c.worst,
                           .detail = c.detail});
  }
  // A solution timed side by side with the candidate.
  struct Other {
    Worker* worker;
    const char* what;  // "reference", "baseline", "rival"
    const char* who;   // in messages: "the task's reference", "the rival"
    ShimKind kind;     // its buffers' layout
  };
  // Times the candidate in batches, each next to one batch of every comparison solution
  // (`others`: the reference, the baseline, the rival; before or after it, alternately) on the
  // same input sets, so all are measured side by side under the same conditions. Verifies every
  // candidate batch.
  Expected<std::vector<double>> time_side_by_side(Worker& cand, const std::vector<Other>& others,
                                                  const ShapeInstance& inst, Worker& oracle,
                                                  int reps, double overhead,
                                                  std::vector<std::vector<double>>* other_times,
                                                  std::string* stopped_early);

  const Task& task_;
  const EvalOptions& o_;
  RunResult& res_;
  const te::Program* program_;  // the TE oracle for test shapes; null when the task has no spec
  uint64_t seed_ = 0, seed_count_ = 0;
  bool failed_ = false;
};

Expected<bool> Judge::check_test_shapes(const Solution& cand, const Solution& oracle) {
  for (const ShapePoint& point : task_.tests) {
    auto inst = task_.instantiate(point);
    if (!inst) return inst.error();
    note(fmt::format("checking {}", inst->label()));
    std::unique_ptr<Worker> cw, ow;
    auto started = start_workers(*inst, cand, oracle, 1, &cw, &ow);
    if (!started) return started.error();
    if (!*started) return false;
    for (int s = 0; s < std::max(o_.seeds_per_shape, 2); ++s) {
      const uint64_t seed = next_seed();
      KF_RETURN_IF_ERROR(fill_inputs(task_, *inst, *cw, 0, seed));
      copy_inputs(task_, *inst, *cw, 0, *ow, 0, ShimKind::oracle);
      const std::string hash = inputs_hash(task_, *cw);
      poison_outputs(task_, *inst, *cw, 0, ShimKind::candidate);
      poison_outputs(task_, *inst, *ow, 0, ShimKind::oracle);
      // The oracle: the task's TE program, interpreted in f64, when it has one; else the
      // reference at double in its own worker.
      std::vector<std::vector<double>> te_out;
      OracleOutputs want;
      if (program_) {
        auto out = run_te_oracle(*program_, task_, *inst, *ow);
        if (!out) return out.error();
        te_out = std::move(*out);
        for (const auto& o : te_out) want.push_back(o.data());
      } else {
        RunOutcome orc = ow->run(0, 1, o_.oracle_timeout_s);
        if (!orc.ok)
          return Status::error(fmt::format("the task's reference (oracle) failed at {}: {}",
                                           inst->label(), orc.message));
        want = worker_outputs(task_, *ow);
      }
      RunOutcome r = cw->run(0, 1, o_.run_timeout_s);
      res_.output_log = cw->output_log();
      if (!r.ok) {
        fail(r.verdict, fmt::format("at {}: {}", inst->label(), r.message));
        return false;
      }
      const std::string where =
          fmt::format("at {} (input seed {}; --seed {} replays the run)", inst->label(), seed, seed_);
      check_side_effects(*inst, *cw, hash, 0, r.seconds, where);
      if (failed_) return false;
      CompareResult c = compare_outputs(task_, *inst, *cw, 0, want);
      record(*inst, seed, c, false);
      if (!c.passed) {
        fail(Verdict::wrong_answer, fmt::format("wrong answer {}: {}", where, c.detail),
             {fmt::format("largest error relative to the tolerance: {}", c.worst)});
        return false;
      }
    }
  }
  return true;
}

Expected<std::vector<double>> Judge::time_side_by_side(
    Worker& cand, const std::vector<Other>& others, const ShapeInstance& inst, Worker& oracle,
    int reps, double overhead, std::vector<std::vector<double>>* other_times,
    std::string* stopped_early) {
  std::vector<double> times;
  other_times->assign(others.size(), {});
  const ProcessCounters before = cand.counters();
  double wall_in_runs = 0;
  const int k = cand.sets();
  const OracleOutputs oracle_out = worker_outputs(task_, oracle);
  const int first = (k - (reps - 1) % k) % k;  // the batch ends on set 0, which is verified
  const std::string hash = inputs_hash(task_, cand);
  double measured = 0;
  const auto wall_start = Clock::now();
  // One batch of every comparison solution, each on outputs poisoned like the candidate's (the
  // poisoning leaves the output lines in the cache: a solution whose outputs were not written
  // just before its batch would pay for fetching them, and the candidate would look faster).
  const auto run_others = [&]() -> Status {
    for (size_t i = 0; i < others.size(); ++i) {
      for (int s = 0; s < k; ++s) poison_outputs(task_, inst, *others[i].worker, s, others[i].kind);
      RunOutcome rr = others[i].worker->run(first, reps, o_.run_timeout_s);
      if (!rr.ok)
        return Status::error(fmt::format("{} failed during timing: {}", others[i].who, rr.message));
      (*other_times)[i].push_back(std::max(rr.seconds - overhead, 0.0) / reps);
    }
    return {};
  };
  while (static_cast<int>(times.size()) < o_.max_samples) {
    // The order alternates (the candidate first, then the others first) so that neither
    // position's share of the machine's state (clocks, caches, the other core's work) favours one.
    const bool others_first = times.size() % 2 == 1;
    if (others_first) KF_RETURN_IF_ERROR(run_others());
    for (int s = 0; s < k; ++s) poison_outputs(task_, inst, cand, s, ShimKind::candidate);
    RunOutcome r = cand.run(first, reps, o_.run_timeout_s);
    if (!r.ok) {
      fail(r.verdict, fmt::format("during timing at {}: {}", inst.label(), r.message));
      return times;
    }
    wall_in_runs += r.seconds;
    const double per_run = std::max(r.seconds - overhead, 0.0) / reps;
    times.push_back(per_run);
    measured += per_run * reps;
    // Verify this timed run: a sample of set 0 against the oracle, a sample of every other set
    // it used for unwritten outputs; after the last batch, all of set 0 (below).
    for (int j = 0; j < reps; ++j) {
      const int s = (first + j) % k;
      for (size_t t = task_.inputs.size(); t < task_.tensor_count(); ++t) {
        const TensorSpec& spec = task_.tensor(t);
        const Tolerance tol = is_floating(spec.dtype) ? task_.tolerance_for(spec.dtype) : Tolerance{};
        const auto* want = s == 0 ? oracle_out[t - task_.inputs.size()] : nullptr;
        std::string bad = spot_check(spec.name, cand.buffer(s, t), spec.dtype, want,
                                     inst.extents[t], tol, next_seed(), 4096);
        if (!bad.empty()) {
          fail(Verdict::wrong_answer,
               fmt::format("the output of a timed run at {} is wrong (input set {}): {}",
                           inst.label(), s, bad),
               {"every timed call's output is spot-checked, and the last timed output of input "
                "set 0 is checked in full"});
          return times;
        }
      }
    }
    if (!others_first) KF_RETURN_IF_ERROR(run_others());
    const double wall = std::chrono::duration<double>(Clock::now() - wall_start).count();
    const int n = static_cast<int>(times.size());
    if (n >= o_.min_samples && measured >= o_.min_time_s) break;
    // Two samples at least: one call can be disturbed, the faster of two rarely is by much.
    const int enough = std::min(2, o_.min_samples);
    if (n >= enough && wall >= o_.max_timing_wall_s) {
      if (n < o_.min_samples || measured < o_.min_time_s)
        *stopped_early = fmt::format("{} samples: the timing loop's {:.0f} s were spent", n,
                                     o_.max_timing_wall_s);
      break;
    }
    const double fastest = *std::min_element(times.begin(), times.end());
    if (n >= enough && o_.stop_slower_than_s > 0 && fastest > o_.stop_slower_than_s) {
      *stopped_early = fmt::format("{} samples: the fastest ({:.3f} ms) is slower than the "
                                   "{:.3f} ms it had to beat",
                                   n, fastest * 1e3, o_.stop_slower_than_s * 1e3);
      break;
    }
  }
  const ProcessCounters after = cand.counters();
  const double calls = static_cast<double>(times.size()) * reps;
  if (calls > 0 && wall_in_runs > 0)
    res_.counters = Counters{
        .cpus_busy = (after.cpu_s - before.cpu_s) / wall_in_runs,
        .cpu_s_per_call = (after.cpu_s - before.cpu_s) / calls,
        .minor_faults_per_call = static_cast<double>(after.minor_faults - before.minor_faults) / calls,
        .major_faults_per_call = static_cast<double>(after.major_faults - before.major_faults) / calls,
        .context_switches_per_call =
            static_cast<double>(after.voluntary_switches + after.involuntary_switches -
                                before.voluntary_switches - before.involuntary_switches) / calls};
  CompareResult last = compare_outputs(task_, inst, cand, 0, oracle_out);
  record(inst, 0, last, true);
  if (!last.passed)
    fail(Verdict::wrong_answer,
         fmt::format("the output of the last timed run at {} is wrong: {}", inst.label(), last.detail));
  if (!failed_ && inputs_hash(task_, cand) != hash)
    fail(Verdict::forbidden, "the candidate modified an input buffer during timing");
  std::string which;
  if (!failed_ && !cand.canaries_intact(&which))
    fail(Verdict::forbidden,
         fmt::format("the candidate wrote outside its outputs during timing (next to '{}')", which));
  return times;
}

Expected<bool> Judge::bench(const Solution& cand, const Solution& oracle,
                            const std::optional<Solution>& reference,
                            const std::optional<Solution>& baseline,
                            const std::optional<Solution>& rival) {
  auto inst = task_.instantiate(task_.bench);
  if (!inst) return inst.error();
  res_.shape = inst->label();
  size_t set_bytes = 0;
  for (const auto& b : layout_for(task_, *inst, ShimKind::candidate)) set_bytes += b.bytes;
  // Enough input sets that rotating through them defeats the caches (>= 2, <= 8, ~128 MiB).
  const int sets = static_cast<int>(std::clamp<size_t>((size_t{128} << 20) / std::max<size_t>(set_bytes, 1), 2, 8));
  note(fmt::format("bench shape {}: {} input sets of {:.1f} MiB", inst->label(), sets,
                   static_cast<double>(set_bytes) / (1 << 20)));

  std::unique_ptr<Worker> cw, ow;
  auto started = start_workers(*inst, cand, oracle, sets, &cw, &ow);
  if (!started) return started.error();
  if (!*started) return false;
  std::unique_ptr<Worker> rw, bw, vw;
  for (auto [sol, worker, what] : {std::tuple{&reference, &rw, "the task's reference"},
                                   std::tuple{&baseline, &bw, "the task's baseline"},
                                   std::tuple{&rival, &vw, "the rival"}}) {
    if (!*sol) continue;
    auto w = start_worker(task_, *inst, **sol, sets, o_);
    if (!w) return w.error();
    if (auto* f = (*w)->fault()) return Status::error(fmt::format("{} {}", what, f->message));
    *worker = std::move(*w);
  }
  const uint64_t seed = next_seed();
  for (int s = 0; s < sets; ++s) {
    KF_RETURN_IF_ERROR(fill_inputs(task_, *inst, *cw, s, seed + static_cast<uint64_t>(s)));
    if (rw) copy_inputs(task_, *inst, *cw, s, *rw, s, ShimKind::reference);
    if (bw) copy_inputs(task_, *inst, *cw, s, *bw, s, ShimKind::candidate);
    if (vw) copy_inputs(task_, *inst, *cw, s, *vw, s, ShimKind::candidate);
  }
  copy_inputs(task_, *inst, *cw, 0, *ow, 0, ShimKind::oracle);
  poison_outputs(task_, *inst, *ow, 0, ShimKind::oracle);
  note("running the f64 oracle at the bench shape");
  RunOutcome orc = ow->run(0, 1, o_.oracle_timeout_s);
  if (!orc.ok) return Status::error("the task's reference (oracle) failed at the bench shape: " + orc.message);

  // Warm-up run, checked like any other.
  const std::string hash = inputs_hash(task_, *cw);
  for (int s = 0; s < sets; ++s) poison_outputs(task_, *inst, *cw, s, ShimKind::candidate);
  RunOutcome warm = cw->run(0, 1, o_.run_timeout_s);
  res_.output_log = cw->output_log();
  if (!warm.ok) {
    fail(warm.verdict, fmt::format("at {}: {}", inst->label(), warm.message));
    return false;
  }
  check_side_effects(*inst, *cw, hash, 0, warm.seconds, fmt::format("at {}", inst->label()));
  if (failed_) return false;
  CompareResult c = compare_outputs(task_, *inst, *cw, 0, worker_outputs(task_, *ow));
  record(*inst, seed, c, false);
  if (!c.passed) {
    fail(Verdict::wrong_answer,
         fmt::format("wrong answer at {} (--seed {} replays the run): {}", inst->label(), seed_,
                     c.detail),
         {fmt::format("largest error relative to the tolerance: {}", c.worst)});
    return false;
  }
  std::vector<Other> others;
  if (rw) others.push_back({rw.get(), "reference", "the task's reference", ShimKind::reference});
  if (bw) others.push_back({bw.get(), "baseline", "the task's baseline", ShimKind::candidate});
  if (vw) others.push_back({vw.get(), "rival", "the rival", ShimKind::candidate});
  for (const Other& w : others) {
    RunOutcome wwarm = w.worker->run(0, 1, o_.oracle_timeout_s);
    if (!wwarm.ok)
      return Status::error(fmt::format("{} failed at the bench shape: {}", w.who, wwarm.message));
  }

  // Protocol overhead: the fastest of a few empty round trips, subtracted from each batch.
  double overhead = 1e9;
  for (int i = 0; i < 20; ++i) {
    RunOutcome p = cw->ping();
    if (!p.ok) {
      fail(p.verdict, p.message);
      return false;
    }
    overhead = std::min(overhead, p.seconds);
  }
  // Batches of at least ~5 ms, never reusing an input set within a batch.
  const int reps = static_cast<int>(std::clamp(std::ceil(0.005 / std::max(warm.seconds, 1e-9)), 1.0,
                                               static_cast<double>(sets)));
  std::string with;
  for (size_t i = 0; i < others.size(); ++i)
    with += fmt::format("{}the {}", i == 0 ? ", side by side with " : i + 1 == others.size() ? " and " : ", ",
                        others[i].what);
  note(fmt::format("timing: batches of {} call(s){}", reps, with));
  std::vector<std::vector<double>> other_times;
  std::string stopped_early;
  auto times = time_side_by_side(*cw, others, *inst, *ow, reps, overhead, &other_times,
                                 &stopped_early);
  if (!times) return times.error();
  if (failed_) return false;
  res_.timing = summarize_timing(*times, reps, sets, overhead);
  res_.timing->stopped_early = stopped_early;
  if (!stopped_early.empty()) note("timing stopped after " + stopped_early);
  const auto speedup = [&](const Timing& other, Speedup* out) {
    out->median = other.median_s / std::max(res_.timing->median_s, 1e-12);
    out->min = other.min_s / std::max(res_.timing->min_s, 1e-12);
  };
  size_t next = 0;
  if (rw) {
    res_.reference_timing = summarize_timing(other_times[next++], reps, sets, overhead);
    speedup(*res_.reference_timing, &res_.vs_reference);
  }
  if (bw) {
    res_.baseline_timing = summarize_timing(other_times[next++], reps, sets, overhead);
    speedup(*res_.baseline_timing, &res_.vs_baseline);
  }
  if (vw) {
    res_.rival_timing = summarize_timing(other_times[next++], reps, sets, overhead);
    speedup(*res_.rival_timing, &res_.vs_rival);
  }
  if (o_.machine) {
    MachineLimits m = *o_.machine;
    const double t = res_.timing->median_s;
    auto roofline = [&](const MachineLimits& m) {
      Roofline rf;
      rf.flops = inst->flops;
      rf.bytes = inst->bytes;
      rf.gflops = t > 0 ? rf.flops / t * 1e-9 : 0;
      rf.gbps = t > 0 ? rf.bytes / t * 1e-9 : 0;
      rf.peak_gflops = m.peak_gflops;
      rf.peak_gbps = m.dram_gbps;
      const double intensity = rf.bytes > 0 ? rf.flops / rf.bytes : INFINITY;
      rf.attainable_gflops = std::min(m.peak_gflops, intensity * m.dram_gbps);
      rf.bound = intensity * m.dram_gbps < m.peak_gflops ? "memory" : "compute";
      rf.fraction = rf.attainable_gflops > 0 ? rf.gflops / rf.attainable_gflops : 0;
      // The fastest any kernel could be: all FMA units busy, or every byte streamed at three
      // times the L2 bandwidth (about L1's: generous, since a small working set may stay in
      // cache despite the input rotation).
      rf.min_time_s = std::max(m.peak_gflops > 0 ? rf.flops / (m.peak_gflops * 1e9) : 0.0,
                               m.cache_gbps > 0 ? rf.bytes / (3 * m.cache_gbps * 1e9) : 0.0);
      return rf;
    };
    auto too_fast = [&](const Roofline& rf) {
      return rf.min_time_s > 0 && res_.timing->min_s < o_.suspicious_fraction * rf.min_time_s;
    };
    Roofline rf = roofline(m);
    if (too_fast(rf) && o_.remeasure) {
      // Ceilings probed on a busy machine are too low: measure them again before accusing.
      note("faster than the recorded ceilings allow: measuring the machine again");
      if (auto again = o_.remeasure()) {
        m.peak_gflops = std::max(m.peak_gflops, again->peak_gflops);
        m.dram_gbps = std::max(m.dram_gbps, again->dram_gbps);
        m.cache_gbps = std::max(m.cache_gbps, again->cache_gbps);
        rf = roofline(m);
      }
    }
    res_.roofline = rf;
    if (too_fast(rf))
      fail(Verdict::suspicious,
           fmt::format("faster than the machine allows: {:.3g} s per call, but {:.3g} FLOP at "
                       "{:.0f} GFLOP/s and {:.3g} bytes at {:.0f} GB/s need at least {:.3g} s",
                       res_.timing->min_s, rf.flops, m.peak_gflops, rf.bytes, 3 * m.cache_gbps,
                       rf.min_time_s),
           {"a kernel this fast is skipping work (e.g. returning a cached result); the outputs "
            "matched, but the time cannot be real"});
  }
  return !failed_;
}

}  // namespace

Expected<RunResult> evaluate(const Task& task, const std::string& candidate_source,
                             const EvalOptions& o) {
  RunResult res;
  res.task = task.name;
  res.threads = o.threads;
  if (o.machine) res.machine = o.machine->fingerprint;
  std::optional<te::Program> program;
  if (!task.te_spec.empty()) {
    auto p = te::compile_spec(task);
    if (!p) return Status::error("the task's TE spec: " + p.error().message());
    program = std::move(*p);
  }
  Judge judge(task, o, res, program ? &*program : nullptr);

  judge.note("compiling the candidate");
  CompiledObject cand = compile_solution(candidate_source, entry_shim(task, ShimKind::candidate), o.compile);
  res.compile = cand.info;
  if (!cand.info.ok) {
    std::vector<std::string> diags;
    bool in_shim = false;
    for (const auto& d : cand.info.diagnostics)
      if (d.severity == "error") {
        in_shim |= d.file == "kforge_entry.cpp";
        diags.push_back(d.line ? fmt::format("{}:{}:{}: error: {}", d.file, d.line, d.column,
                                             d.message)
                               : d.message);
      }
    if (diags.empty()) diags.push_back(cand.info.log.substr(0, 2000));
    if (in_shim)
      diags.push_back(fmt::format("the judge's entry shim could not call the candidate: it must "
                                  "define `{}`",
                                  candidate_signature(task)));
    judge.fail(Verdict::compile_error, "compilation failed: " + diags.front(), diags);
    return res;
  }
  if (!cand.interposed_symbols.empty()) {
    std::string names;
    for (const auto& s : cand.interposed_symbols) names += (names.empty() ? "" : ", ") + s;
    judge.fail(Verdict::forbidden,
               fmt::format("the candidate defines C-library functions: {}", names),
               {"a kernel may not define functions that would replace the C library's (clocks, "
                "process control): the judge's timing must not be tampered with"});
    return res;
  }
  CompileOptions ref_opts = o.compile;
  ref_opts.extra_flags.clear();
  CompiledObject oracle = compile_solution(task.reference_source, entry_shim(task, ShimKind::oracle), ref_opts);
  if (!oracle.info.ok)
    return Status::error(fmt::format("{}/reference.cpp does not compile as the f64 oracle:\n{}",
                                     task.dir.string(), oracle.info.log));
  std::optional<Solution> reference;
  if (o.time && o.time_reference) {
    CompiledObject ref = compile_solution(task.reference_source, entry_shim(task, ShimKind::reference), ref_opts);
    if (!ref.info.ok)
      return Status::error(fmt::format("{}/reference.cpp does not compile at {}:\n{}",
                                       task.dir.string(), dtype_name(task.dtype), ref.info.log));
    reference = Solution{ref.so_path, ShimKind::reference};
  }
  std::optional<Solution> baseline;
  if (o.time && o.time_baseline && task.baseline) {
    auto src = read_file(task.dir / task.baseline->file);
    if (!src) return src.error();
    CompileOptions bl_opts = ref_opts;
    bl_opts.libs = task.baseline->libs;
    CompiledObject bl = compile_solution(*src, entry_shim(task, ShimKind::candidate), bl_opts);
    if (!bl.info.ok)
      return Status::error(fmt::format("{} does not compile:\n{}", task.baseline->file, bl.info.log));
    baseline = Solution{bl.so_path, ShimKind::candidate};
    res.baseline_name = task.baseline->name;
  }
  std::optional<Solution> rival;
  if (o.time && !o.rival_source.empty()) {
    CompiledObject rv = compile_solution(o.rival_source, entry_shim(task, ShimKind::candidate), o.compile);
    if (!rv.info.ok)
      return Status::error(fmt::format("the rival ({}) does not compile:\n{}", o.rival_name, rv.info.log));
    rival = Solution{rv.so_path, ShimKind::candidate};
    res.rival_name = o.rival_name;
  }
  const Solution cand_s{cand.so_path, ShimKind::candidate};
  const Solution oracle_s{oracle.so_path, ShimKind::oracle};

  auto tests_ok = judge.check_test_shapes(cand_s, oracle_s);
  if (!tests_ok) return tests_ok.error();
  if (!*tests_ok) return res;
  if (o.time) {
    auto bench_ok = judge.bench(cand_s, oracle_s, reference, baseline, rival);
    if (!bench_ok) return bench_ok.error();
    if (!*bench_ok) return res;
  }
  res.verdict = Verdict::ok;
  res.message = o.time ? fmt::format("correct on {} test shapes and the bench shape",
                                     task.tests.size())
                       : fmt::format("correct on {} test shapes (not timed)", task.tests.size());
  return res;
}

Expected<std::vector<double>> time_stages(const Task& task, const std::string& instrumented_source,
                                          int calls, const EvalOptions& o) {
  if (calls < 1) return Status::error("time_stages: calls must be at least 1");
  CompiledObject so =
      compile_solution(instrumented_source, entry_shim(task, ShimKind::candidate), o.compile);
  if (!so.info.ok)
    return Status::error("the instrumented build does not compile: " + so.info.log.substr(0, 500));
  auto inst = task.instantiate(task.bench);
  if (!inst) return inst.error();
  auto w = start_worker(task, *inst, Solution{so.so_path, ShimKind::candidate}, 1, o);
  if (!w) return w.error();
  if (auto* f = (*w)->fault()) return Status::error("the instrumented build " + f->message);
  KF_RETURN_IF_ERROR(fill_inputs(task, *inst, **w, 0, o.seed ? o.seed : 0x5eedull));
  RunOutcome warm = (*w)->run(0, 1, o.run_timeout_s);
  if (!warm.ok) return Status::error("the instrumented build: " + warm.message);
  auto last = (*w)->stage_times();
  if (!last) return last.error();
  // Per call, then the median of each stage: one call slowed by the machine's other work (a
  // shared VM) moves a sum over all calls, not a median.
  std::vector<std::vector<double>> per_stage(last->size());
  for (int c = 0; c < calls; ++c) {
    RunOutcome run = (*w)->run(0, 1, o.run_timeout_s);
    if (!run.ok) return Status::error("the instrumented build: " + run.message);
    auto now = (*w)->stage_times();
    if (!now) return now.error();
    for (size_t i = 0; i < per_stage.size() && i < now->size(); ++i)
      per_stage[i].push_back(static_cast<double>((*now)[i] - (*last)[i]) * 1e-9);
    last = std::move(now);
  }
  std::vector<double> seconds;
  for (auto& v : per_stage) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    seconds.push_back(v[v.size() / 2]);
  }
  return seconds;
}

MachineLimits machine_limits(const MachineInfo& m, int threads) {
  return MachineLimits{.peak_gflops = m.peak_gflops(threads),
                       .dram_gbps = m.dram_gbps(threads),
                       .cache_gbps = m.cache_gbps_1t * threads,
                       .fingerprint = m.fingerprint};
}

std::function<std::optional<MachineLimits>()> remeasure_machine(int threads, const std::string& cxx) {
  return [threads, cxx]() -> std::optional<MachineLimits> {
    auto m = probe_machine({.refresh = true, .cxx = cxx});
    if (!m) return std::nullopt;
    return machine_limits(*m, threads);
  };
}

}  // namespace kf
