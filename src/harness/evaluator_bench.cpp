// The bench shape: the candidate is checked and timed side by side with the solutions it is
// compared with (side_by_side.h), on rotated input contents whose answers the oracle computed
// (bench_inputs.h), from workers placed alike (placement.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "harness/bench_inputs.h"
#include "harness/evaluator_judge.h"
#include "harness/oracle_cache.h"
#include "harness/placement.h"
#include "harness/side_by_side.h"
#include "harness/timer.h"

namespace kf {
namespace {

// Elements of each output whose oracle value is kept per input content: every timed call is
// checked at up to kCheckedPerCall of them.
constexpr size_t kSampledPerOutput = size_t{1} << 15;
constexpr size_t kCheckedPerCall = 4096;
// A candidate that did more CPU work in its timed calls than its grant could (by more than
// kBeyondShare of their wall time and kMinExcessCpuS), or whose threads moved off the granted
// CPUs (kMinEscapedThreads of them, or any that ran kMinEscapedCpuS there: a thread that lives
// for one call is seen at a random moment of its life), used threads it was not given.
constexpr double kBeyondShare = 0.2;
constexpr double kMinEscapedCpuS = 0.01;
constexpr int kMinEscapedThreads = 4;
constexpr double kMinExcessCpuS = 0.05;

OracleOutputs pointers(const std::vector<std::vector<double>>& full) {
  OracleOutputs p;
  for (const auto& out : full) p.push_back(out.data());
  return p;
}

std::vector<std::vector<double>> copy_outputs(const Task& task, const ShapeInstance& inst,
                                              const OracleOutputs& full) {
  std::vector<std::vector<double>> c;
  for (size_t o = 0; o < full.size(); ++o) {
    const size_t n = inst.elements[task.inputs.size() + o];
    c.emplace_back(full[o], full[o] + n);
  }
  return c;
}

}  // namespace

struct Judge::Bench {
  ShapeInstance inst;
  int slots = 2;
  std::unique_ptr<Worker> oracle;  // null when the answers came from OracleCache
  uint64_t input_seed = 0;
  std::vector<uint64_t> sample_seeds;  // per output
  std::string cache_key;               // empty: the answers are not cached (too large, or off)
  std::shared_ptr<const OracleRecord> cached;
  std::shared_ptr<OracleRecord> filling;  // a miss's answers, kept once every content has one
  std::vector<std::unique_ptr<Worker>> workers;  // the candidate first, then the others
  std::vector<TimedSolution> timed;              // the same order
  // Where each other solution's timing goes in the result (index 0, the candidate, unused).
  std::vector<std::pair<std::optional<Timing>*, Speedup*>> report;
  std::optional<BenchInputs> inputs;
  OracleAnswers answers;                     // [content][output]
  std::vector<std::vector<size_t>> sampled;  // per output: the elements answers keep
  std::vector<std::vector<ContentId>> held;  // [solution][slot]
  std::vector<int> granted_cpus;             // the timed workers' CPUs (empty: any)
  int full_content = 0;                      // the content whose full answer the oracle holds
  double warm_s = 0;
  SideBySide timing;
  Worker& cand() { return *workers.front(); }
};

Expected<bool> Judge::start_bench_workers(Bench& b, const Solution& cand, const Solution& oracle,
                                          const std::optional<Solution>& reference,
                                          const std::optional<Solution>& baseline,
                                          const std::optional<Solution>& rival) {
  // The oracle first: it is not timed, and it takes what memory is left in small blocks. It is
  // not started when its answers at these inputs are known.
  if (!b.cached) {
    auto ow = start_worker(task_, b.inst, oracle, 1, o_);
    if (!ow) return ow.error();
    if (auto* f = (*ow)->fault())
      return Status::error("the task's reference (oracle) " + f->message);
    b.oracle = std::move(*ow);
    b.oracle->pause();
  }

  struct Role {
    const Solution* solution;
    const char* who;
    std::optional<Timing>* timing;
    Speedup* speedup;
  };
  std::vector<Role> roles = {{&cand, "the candidate", nullptr, nullptr}};
  if (reference)
    roles.push_back(
        {&*reference, "the task's reference", &res_.reference_timing, &res_.vs_reference});
  if (baseline)
    roles.push_back({&*baseline, "the task's baseline", &res_.baseline_timing, &res_.vs_baseline});
  if (rival) roles.push_back({&*rival, "the rival", &res_.rival_timing, &res_.vs_rival});
  // Started in an order drawn from the run's seed: placement is the same for all by design, and
  // what remains of chance favours no role.
  std::vector<size_t> order(roles.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(next_seed()));
  b.workers.resize(roles.size());
  {
    TimedPlacement place(o_.threads,
                         static_cast<size_t>(b.slots) * set_bytes(task_, b.inst, cand.kind));
    for (size_t i : order) {
      auto w = start_worker(task_, b.inst, *roles[i].solution, b.slots, o_);
      if (!w) return w.error();
      b.workers[i] = std::move(*w);
      b.workers[i]->pause();
    }
    b.granted_cpus = place.granted();
    note(fmt::format("timed workers on {}{}", place.cpus().empty() ? "any CPU" : place.cpus(),
                     place.ballast_bytes()
                         ? fmt::format(", {:.0f} MiB of small free blocks held "
                                       "while they started",
                                       static_cast<double>(place.ballast_bytes()) / (1 << 20))
                         : ""));
  }
  for (size_t i = 0; i < roles.size(); ++i) {
    if (auto* f = b.workers[i]->fault()) {
      if (i == 0) {
        fail(f->verdict, f->message);
        return false;
      }
      return Status::error(fmt::format("{} {}", roles[i].who, f->message));
    }
    b.timed.push_back({b.workers[i].get(), roles[i].solution->kind, roles[i].who});
    b.report.emplace_back(roles[i].timing, roles[i].speedup);
  }
  return true;
}

// Runs the oracle on content `content` and keeps its sampled answer; its buffers then hold that
// content's full answer. Returns the oracle's seconds.
Expected<double> Judge::run_oracle(Bench& b, int content) {
  const ContentId c{content / 2, content % 2};
  b.inputs->write(*b.oracle, ShimKind::oracle, 0, c);
  poison_outputs(task_, b.inst, *b.oracle, 0, ShimKind::oracle);
  RunOutcome orc = b.oracle->run(0, 1, o_.oracle_timeout_s);
  b.oracle->pause();
  if (!orc.ok)
    return Status::error("the task's reference (oracle) failed at the bench shape: " + orc.message);
  const OracleOutputs full = worker_outputs(task_, *b.oracle);
  if (b.answers.size() <= static_cast<size_t>(content))
    b.answers.resize(static_cast<size_t>(content) + 1);
  auto& a = b.answers[static_cast<size_t>(content)];
  a.clear();
  for (size_t o = 0; o < full.size(); ++o) a.push_back(take_sample(full[o], b.sampled[o]));
  b.full_content = content;
  if (b.filling && content == 0) b.filling->first = copy_outputs(task_, b.inst, full);
  return orc.seconds;
}

// The oracle's full answer for the content it answered last (`last`), or for content 0.
OracleOutputs Judge::full_answer(const Bench& b, bool last) const {
  if (b.oracle) return worker_outputs(task_, *b.oracle);
  return pointers(last ? b.cached->last : b.cached->first);
}

// Draws the inputs, asks the oracle for base 0, decides how many contents the oracle can answer
// for, and fills every timed worker's slots.
Expected<bool> Judge::prepare_inputs(Bench& b) {
  auto in = BenchInputs::create(task_, b.inst, b.slots, b.input_seed);
  if (!in) return in.error();
  b.inputs.emplace(std::move(*in));
  for (size_t o = 0; o < b.sample_seeds.size(); ++o)
    b.sampled.push_back(sample_indices(b.inst.elements[task_.inputs.size() + o], kSampledPerOutput,
                                       b.sample_seeds[o]));
  if (b.cached) {
    note(
        "the f64 oracle's answers at the bench shape are known (the same inputs as an earlier "
        "evaluation)");
    KF_RETURN_IF_ERROR(b.inputs->add_bases(b.cached->bases));
    b.answers = b.cached->answers;
    b.full_content = b.inputs->contents() - 1;
  } else {
    note("running the f64 oracle at the bench shape");
    auto first = run_oracle(b, 0);
    if (!first) return first.error();
    // Every base costs two oracle runs (its variants); at least one base, at most one per slot.
    const double extra =
        std::max(1.0, std::floor(o_.bench_oracle_budget_s / std::max(*first, 1e-6)));
    const int bases = std::clamp(static_cast<int>((1 + extra) / 2), 1, b.slots);
    KF_RETURN_IF_ERROR(b.inputs->add_bases(bases));
  }
  b.held.assign(b.timed.size(), {});
  for (size_t i = 0; i < b.timed.size(); ++i)
    for (int s = 0; s < b.slots; ++s) {
      b.inputs->write(*b.timed[i].worker, b.timed[i].kind, s, b.inputs->initial(s));
      b.held[i].push_back(b.inputs->initial(s));
    }
  return true;
}

// The warm-up calls on slot 0 (content 0): the candidate's two are checked like a test shape's,
// in full, while the oracle's buffers hold content 0's answer; the others get one each.
Expected<bool> Judge::warm_up(Bench& b) {
  Worker& cw = b.cand();
  const std::string hash = inputs_hash(task_, cw);
  poison_outputs(task_, b.inst, cw, 0, ShimKind::candidate);
  RunOutcome warm = cw.run(0, 1, o_.run_timeout_s);
  res_.output_log = cw.output_log();
  if (!warm.ok) {
    fail(warm.verdict, fmt::format("at {}: {}", b.inst.label(), warm.message));
    return false;
  }
  check_side_effects(cw, hash, 0, warm.seconds, fmt::format("at {}", b.inst.label()));
  cw.pause();
  if (failed_) return false;
  CompareResult c = compare_outputs(task_, b.inst, cw, 0, full_answer(b, false));
  record(b.inst, seed_, c, false);
  if (!c.passed) {
    fail(Verdict::wrong_answer,
         fmt::format("wrong answer at {} (--seed {} replays the run): {}", b.inst.label(), seed_,
                     c.detail),
         {fmt::format("largest error relative to the tolerance: {}", c.worst)});
    return false;
  }
  // The first call paid for mapping slot 0's pages: a second one, on the same slot, gives the
  // time per call the batches are sized by (and is compared in full too).
  poison_outputs(task_, b.inst, cw, 0, ShimKind::candidate);
  RunOutcome again = cw.run(0, 1, o_.run_timeout_s);
  cw.pause();
  if (!again.ok) {
    fail(again.verdict, fmt::format("at {}: {}", b.inst.label(), again.message));
    return false;
  }
  b.warm_s = std::min(warm.seconds, again.seconds);
  c = compare_outputs(task_, b.inst, cw, 0, full_answer(b, false));
  if (!c.passed) {
    fail(Verdict::wrong_answer,
         fmt::format("wrong answer at {} on a second call (--seed {} replays the run): {}",
                     b.inst.label(), seed_, c.detail));
    return false;
  }
  for (size_t i = 1; i < b.timed.size(); ++i) {
    Worker& w = *b.timed[i].worker;
    poison_outputs(task_, b.inst, w, 0, b.timed[i].kind);
    RunOutcome r = w.run(0, 1, o_.oracle_timeout_s);
    w.pause();
    if (!r.ok)
      return Status::error(
          fmt::format("{} failed at the bench shape: {}", b.timed[i].who, r.message));
  }
  // Slot 0 was read by every warm-up: its next call reads the other variant.
  for (size_t i = 0; i < b.timed.size(); ++i) {
    const ContentId next = b.inputs->other_variant(b.held[i][0]);
    b.inputs->switch_content(*b.timed[i].worker, b.timed[i].kind, 0, b.held[i][0], next);
    b.held[i][0] = next;
  }
  return true;
}

// The oracle's answers for the other contents, then the timing loop.
Expected<bool> Judge::time_bench(Bench& b) {
  if (!b.cached) {
    for (int c = 1; c < b.inputs->contents(); ++c) {
      auto s = run_oracle(b, c);
      if (!s) return s.error();
    }
    if (b.filling) {
      b.filling->bases = b.inputs->bases();
      b.filling->answers = b.answers;
      b.filling->last = copy_outputs(task_, b.inst, worker_outputs(task_, *b.oracle));
      OracleCache::process().put(b.cache_key, std::move(b.filling));
    }
  }
  Worker& cw = b.cand();
  // Protocol overhead: the fastest of a few empty round trips, each from a stopped worker like
  // every timed batch's, subtracted from each batch.
  double overhead = 1e9;
  for (int i = 0; i < 20; ++i) {
    cw.pause();
    RunOutcome p = cw.ping();
    if (!p.ok) {
      fail(p.verdict, p.message);
      return false;
    }
    overhead = std::min(overhead, p.seconds);
  }
  cw.pause();
  // Batches of at least ~5 ms, never reusing an input slot within a batch.
  const int reps = static_cast<int>(
      std::clamp(std::ceil(0.005 / std::max(b.warm_s, 1e-9)), 1.0, static_cast<double>(b.slots)));
  std::string with;
  for (size_t i = 1; i < b.timed.size(); ++i)
    with += fmt::format("{}{}",
                        i == 1                    ? ", side by side with "
                        : i + 1 == b.timed.size() ? " and "
                                                  : ", ",
                        b.timed[i].who);
  note(fmt::format("timing: batches of {} call(s) over {} input contents{}", reps,
                   b.inputs->contents(), with));
  SideBySideOptions so{.reps = reps,
                       .threads = o_.threads,
                       .granted_cpus = b.granted_cpus,
                       .overhead_s = overhead,
                       .run_timeout_s = o_.run_timeout_s,
                       .min_samples = o_.min_samples,
                       .max_samples = o_.max_samples,
                       .min_time_s = o_.min_time_s,
                       .max_timing_wall_s = o_.max_timing_wall_s,
                       .stop_slower_than_s = o_.stop_slower_than_s,
                       .seed = next_seed(),
                       .checked_per_call = kCheckedPerCall,
                       .on_round = o_.timing_progress};
  auto t = time_side_by_side(task_, b.inst, b.timed, *b.inputs, b.answers, b.held, so);
  if (!t) return t.error();
  b.timing = std::move(*t);
  res_.output_log = cw.output_log();
  if (b.timing.failed()) {
    fail(*b.timing.verdict, b.timing.message, b.timing.diagnostics);
    return false;
  }
  const int sets = b.slots;
  res_.timing = summarize_timing(b.timing.times[0], reps, sets, overhead);
  res_.timing->stopped_early = b.timing.stopped_early;
  if (!b.timing.stopped_early.empty()) note("timing stopped after " + b.timing.stopped_early);
  for (size_t i = 1; i < b.timed.size(); ++i) {
    const Timing other = summarize_timing(b.timing.times[i], reps, sets, overhead);
    *b.report[i].second = {.median = other.median_s / std::max(res_.timing->median_s, 1e-12),
                           .min = other.min_s / std::max(res_.timing->min_s, 1e-12)};
    *b.report[i].first = other;
  }
  return true;
}

// After timing: one more call, on the content whose full answer the oracle holds, compared in
// full; every slot's inputs as the judge wrote them; nothing written outside the outputs.
bool Judge::verify_after_timing(Bench& b) {
  Worker& cw = b.cand();
  const ContentId last{b.full_content / 2, b.full_content % 2};
  const int slot = last.base;  // slot s holds base s % bases, and bases <= slots
  ContentId& held = b.held[0][static_cast<size_t>(slot)];
  b.inputs->switch_content(cw, ShimKind::candidate, slot, held, last);
  held = last;
  poison_outputs(task_, b.inst, cw, slot, ShimKind::candidate);
  RunOutcome r = cw.run(slot, 1, o_.run_timeout_s);
  cw.pause();
  if (!r.ok) {
    fail(r.verdict, fmt::format("after timing at {}: {}", b.inst.label(), r.message));
    return false;
  }
  CompareResult c = compare_outputs(task_, b.inst, cw, slot, full_answer(b, true));
  record(b.inst, seed_, c, true);
  if (!c.passed) {
    fail(Verdict::wrong_answer,
         fmt::format("the output of a call after timing at {} is wrong: {}", b.inst.label(),
                     c.detail),
         {"after the timed calls, one more call is compared in full with the oracle"});
    return false;
  }
  for (int s = 0; s < b.slots; ++s)
    if (!b.inputs->holds(cw, ShimKind::candidate, s, b.held[0][static_cast<size_t>(s)])) {
      fail(Verdict::forbidden, "the candidate modified an input buffer during timing");
      return false;
    }
  std::string which;
  if (!cw.canaries_intact(&which)) {
    fail(
        Verdict::forbidden,
        fmt::format("the candidate wrote outside its outputs during timing (next to '{}')", which));
    return false;
  }
  return true;
}

// The candidate's CPU time during its timed batches, against its thread grant.
void Judge::judge_cpu_use(const Bench& b) {
  const CpuUse& u = b.timing.cpu;
  const double calls = static_cast<double>(b.timing.times[0].size()) * res_.timing->reps_per_sample;
  if (calls <= 0 || u.wall_s <= 0) return;
  const ProcessCounters &first = u.first, &last = u.last;
  res_.counters = Counters{
      .cpus_busy = u.in_batches_s / u.wall_s,
      .cpu_s_per_call = u.in_batches_s / calls,
      .minor_faults_per_call = static_cast<double>(last.minor_faults - first.minor_faults) / calls,
      .major_faults_per_call = static_cast<double>(last.major_faults - first.major_faults) / calls,
      .context_switches_per_call =
          static_cast<double>(last.voluntary_switches + last.involuntary_switches -
                              first.voluntary_switches - first.involuntary_switches) /
          calls,
      .cpu_s_while_stopped = u.while_stopped_s,
      .cpu_s_beyond_grant = std::max(u.beyond_capacity_s, u.escaped_s)};
  const double cpus = u.in_batches_s / u.wall_s;
  const std::string grant = fmt::format("the kernel ran more threads than its grant of {} thread{}",
                                        o_.threads, o_.threads == 1 ? "" : "s");
  const std::string why =
      "a kernel may use the threads it is given (OMP_NUM_THREADS, on the CPUs its worker was "
      "started on) and no more: more would be measured against solutions that kept to the grant";
  if (u.escaped_s > kMinEscapedCpuS || u.escaped_threads >= kMinEscapedThreads)
    return fail(Verdict::forbidden,
                fmt::format("{}: {} of its threads moved off the CPU{} it was given ({}) during "
                            "its timed calls, seen to have run {:.3f} s of CPU time at least",
                            grant, u.escaped_threads, b.granted_cpus.size() == 1 ? "" : "s",
                            fmt::join(b.granted_cpus, ", "), u.escaped_s),
                {why});
  if (u.beyond_capacity_s > kBeyondShare * u.wall_s && u.beyond_capacity_s > kMinExcessCpuS)
    return fail(Verdict::forbidden,
                fmt::format("{}: {:.2f} CPUs busy during its timed calls ({:.3f} s of CPU time in "
                            "{:.3f} s, {:.3f} s more than {} thread{} can do)",
                            grant, cpus, u.in_batches_s, u.wall_s, u.beyond_capacity_s, o_.threads,
                            o_.threads == 1 ? "" : "s"),
                {why});
  if (u.while_stopped_s > kMinExcessCpuS)
    fail(Verdict::forbidden,
         fmt::format("the candidate's worker used {:.3f} s of CPU time while it was stopped",
                     u.while_stopped_s),
         {"between its timed calls a solution's worker is stopped: CPU time then is work that "
          "escaped the judge's control"});
}

void Judge::judge_roofline(const ShapeInstance& inst) {
  if (!o_.machine) return;
  MachineLimits m = *o_.machine;
  const double t = res_.timing->median_s;
  auto roofline = [&](const MachineLimits& m) {
    Roofline rf;
    rf.flops = inst.flops;
    rf.bytes = inst.bytes;
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

// Draws the bench inputs' seeds and looks their answers up in OracleCache; a miss whose full
// answers (two copies of the outputs in f64) fit the cache will fill it.
void Judge::find_oracle_answers(Bench& b, const Solution& oracle) {
  b.input_seed = next_seed();
  size_t full_bytes = 0;
  for (size_t t = task_.inputs.size(); t < task_.tensor_count(); ++t) {
    b.sample_seeds.push_back(next_seed());
    full_bytes += 2 * b.inst.elements[t] * sizeof(double);
  }
  OracleCache& cache = OracleCache::process();
  if (oracle.id.empty() || full_bytes > cache.capacity() / 8) return;
  b.cache_key = oracle_cache_key(task_, b.inst, oracle.id, b.slots, b.input_seed, b.sample_seeds);
  b.cached = cache.find(b.cache_key);
  if (!b.cached) b.filling = std::make_shared<OracleRecord>();
}

Expected<bool> Judge::bench(const Solution& cand, const Solution& oracle,
                            const std::optional<Solution>& reference,
                            const std::optional<Solution>& baseline,
                            const std::optional<Solution>& rival) {
  auto inst = task_.instantiate(task_.bench);
  if (!inst) return inst.error();
  res_.shape = inst->label();
  Bench b{.inst = *inst};
  const size_t bytes = set_bytes(task_, b.inst, ShimKind::candidate);
  // Enough input sets that rotating through them defeats the caches (>= 2, <= 8, ~128 MiB).
  b.slots =
      static_cast<int>(std::clamp<size_t>((size_t{128} << 20) / std::max<size_t>(bytes, 1), 2, 8));
  note(fmt::format("bench shape {}: {} input sets of {:.1f} MiB", b.inst.label(), b.slots,
                   static_cast<double>(bytes) / (1 << 20)));
  find_oracle_answers(b, oracle);
  auto started = start_bench_workers(b, cand, oracle, reference, baseline, rival);
  if (!started) return started.error();
  if (!*started) return false;
  for (auto step : {&Judge::prepare_inputs, &Judge::warm_up, &Judge::time_bench}) {
    auto ok = (this->*step)(b);
    if (!ok) return ok.error();
    if (!*ok) return false;
  }
  judge_cpu_use(b);
  if (failed_ || !verify_after_timing(b)) return false;
  judge_roofline(b.inst);
  return !failed_;
}

}  // namespace kf
