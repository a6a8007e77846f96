#include "cli/eval_command.h"

#include <fmt/format.h>

#include <memory>

#include "agents/profiler.h"
#include "cli/cli_output.h"
#include "cli/lower_command.h"
#include "harness/evaluator.h"
#include "harness/machine.h"
#include "modes/progress_bar.h"
#include "support/fs.h"
#include "support/json_text.h"

namespace kf {
namespace {

// `kforge eval --json`: the judge's result, with the profile under "profile" when --profile
// (docs/schemas/eval.schema.json).
constexpr const char* kEvalSchema = "kforge-eval/1";

struct EvalArgs {
  std::string task_dir, candidate, rival;
  int threads = 1;
  bool json = false, no_reference = false, no_time = false, quiet = false, baseline = false;
  bool vs_baseline = false, profile = false;
  uint64_t seed = 0;
  double min_time = 1.0, timeout = 30;
  std::string cxx = "g++";
  std::vector<std::string> flags;
};

std::string human_time(double s) {
  if (s >= 1) return fmt::format("{:.3f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.2f} us", s * 1e6);
}

void print_text(const RunResult& r) {
  fmt::print("task:     {}\n", r.task);
  fmt::print("verdict:  {}\n", verdict_name(r.verdict));
  fmt::print("          {}\n", terminal_text(r.message));
  for (const auto& d : r.diagnostics) fmt::print("  - {}\n", terminal_text(d));
  fmt::print("compile:  {:.2f} s{} (key {})\n", r.compile.seconds,
             r.compile.cached ? ", cached" : "", r.compile.key.substr(0, 12));
  int passed = 0;
  for (const auto& c : r.checks) passed += c.passed;
  fmt::print("checks:   {}/{} passed", passed, r.checks.size());
  double worst = 0;
  for (const auto& c : r.checks) worst = std::max(worst, c.rel_l2);
  fmt::print(" (worst relative L2 error {:.2e}", worst);
  if (const double ratio = r.worst_error_ratio(); passed > 0)
    fmt::print("; worst element at {:.2f} of its bound{}", ratio,
               ratio > 0.5 ? ": a thin margin, other input seeds may fail it" : "");
  fmt::print(")\n");
  if (r.timing) {
    const Timing& t = *r.timing;
    fmt::print("shape:    {}  (threads {})\n", r.shape, r.threads);
    fmt::print(
        "time:     median {}  min {}  spread {:.1f}%  ({} samples x {} calls, {} input sets)\n",
        human_time(t.median_s), human_time(t.min_s), 100 * t.spread, t.samples, t.reps_per_sample,
        t.sets);
  }
  // Another solution timed in the same run: its times, then the candidate's speedup over it.
  const auto other = [](const std::string& what, const Timing& t, const Speedup& s,
                        const std::string& name) {
    fmt::print("{:<9} median {}  min {}{}\n", what + ":", human_time(t.median_s),
               human_time(t.min_s), name.empty() ? "" : " (" + name + ")");
    fmt::print("speedup:  {:.2f}x median, {:.2f}x min (over the {}, same run)\n", s.median, s.min,
               what);
  };
  if (r.reference_timing) other("reference", *r.reference_timing, r.vs_reference, "");
  if (r.baseline_timing) other("baseline", *r.baseline_timing, r.vs_baseline, r.baseline_name);
  if (r.rival_timing) other("rival", *r.rival_timing, r.vs_rival, r.rival_name);
  if (r.timing && !r.timing->stopped_early.empty())
    fmt::print("note:     timing stopped after {}\n", r.timing->stopped_early);
  if (r.counters) {
    const Counters& c = *r.counters;
    fmt::print(
        "counters: {:.2f} CPUs busy, {:.0f} minor faults, {:.1f} context switches per call\n",
        c.cpus_busy, c.minor_faults_per_call, c.context_switches_per_call);
  }
  if (r.roofline) {
    const Roofline& f = *r.roofline;
    fmt::print(
        "perf:     {:.1f} GFLOP/s, {:.1f} GB/s; {}-bound, {:.1f}% of roofline "
        "({:.0f} GFLOP/s attainable; peak {:.0f} GFLOP/s, {:.0f} GB/s)\n",
        f.gflops, f.gbps, f.bound, 100 * f.fraction, f.attainable_gflops, f.peak_gflops,
        f.peak_gbps);
  }
}

int run_eval(const EvalArgs& a) {
  auto task = load_task(a.task_dir);
  if (!task) {
    print_error(task.error().message());
    return 2;
  }
  std::string candidate = a.candidate;
  EvalOptions o;
  if (a.baseline) {
    if (!task->baseline) {
      fmt::print(stderr, "error: {} has no [baseline]\n", task->name);
      return 2;
    }
    candidate = (task->dir / task->baseline->file).string();
    o.compile.libs = task->baseline->libs;  // a baseline may link libraries; a candidate may not
  } else if (candidate.empty()) {
    fmt::print(stderr, "error: name a candidate file, or pass --baseline\n");
    return 2;
  }
  // A .cpp as it is, a .sched lowered from the task's TE spec.
  const auto read_solution = [&](const std::string& path,
                                 std::optional<std::string>* schedule) -> Expected<std::string> {
    auto text = read_file(path);
    if (!text || !path.ends_with(".sched")) return text;
    if (schedule) *schedule = *text;
    return lower_schedule_file(*task, path, *text);
  };
  std::optional<std::string> schedule;  // the schedule a .sched candidate is generated from
  auto source = read_solution(candidate, &schedule);
  if (!source) {
    print_error(source.error().message());
    return 2;
  }
  if (!a.rival.empty()) {
    auto rival = read_solution(a.rival, nullptr);
    if (!rival) {
      print_error(rival.error().message());
      return 2;
    }
    o.rival_source = *rival;
    o.rival_name = a.rival;
  }
  o.threads = a.threads;
  o.seed = a.seed;
  o.time = !a.no_time;
  o.time_reference = !a.no_reference;
  o.time_baseline = a.vs_baseline;
  o.min_time_s = a.min_time;
  o.run_timeout_s = a.timeout;
  o.compile.cxx = a.cxx;
  o.compile.extra_flags = a.flags;
  // Status lines on stderr; on a terminal the timing loop's live line with its ETA, cleared
  // before the next line.
  auto live = std::make_shared<bool>(false);
  if (!a.quiet && !a.json) {
    o.progress = [live](const std::string& s) {
      fmt::print(stderr, "{}... {}\n", *live ? "\r\033[K" : "", s);
      *live = false;
    };
    if (ProgressBar::wanted())
      o.timing_progress = [live](const TimingProgress& p) {
        fmt::print(stderr, "\r\033[K... {}", timing_bar_text(p));
        std::fflush(stderr);
        *live = true;
      };
  }
  std::optional<MachineInfo> machine;
  if (o.time) {
    auto m = probe_machine({});
    if (!m) {
      fmt::print(stderr, "error: machine probe failed: {}\n", m.error().message());
      return 2;
    }
    machine = *m;
    o.machine = machine_limits(*m, a.threads);
    o.remeasure = remeasure_machine(a.threads, o.compile.cxx);
  }
  auto r = evaluate(*task, *source, o);
  if (*live) fmt::print(stderr, "\r\033[K");
  if (!r) {
    print_error(r.error().message());
    return 2;
  }
  std::optional<agents::Profile> profile;
  if (a.profile && machine && r->timing) {
    if (o.progress) o.progress("profiling the candidate");
    agents::ProfileOptions po;
    po.cxx = a.cxx;
    po.threads = a.threads;
    po.schedule = schedule;
    auto p = agents::profile_candidate(*task, *source, *r, *machine, po);
    if (!p) {
      fmt::print(stderr, "error: profile: {}\n", p.error().message());
      return 2;
    }
    profile = std::move(*p);
  }
  if (a.json) {
    nlohmann::json doc = r->to_json();
    if (profile) doc["profile"] = profile->to_json();
    print_json(kEvalSchema, std::move(doc));
  } else {
    print_text(*r);
    if (a.profile && !profile) fmt::print("profile:  none (the candidate was not timed)\n");
    if (profile) {
      fmt::print("profile:\n");
      for (const auto& f : profile->findings) fmt::print("  - {}\n", f);
    }
  }
  return r->verdict == Verdict::ok ? 0 : 1;
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  CLI::App* cmd = app.add_subcommand("eval", "Judge a candidate kernel on a task");
  cmd->add_option("task", args->task_dir, "Task directory (task.toml + reference.cpp)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("candidate", args->candidate, "Candidate C++ source")->check(CLI::ExistingFile);
  cmd->add_flag("--baseline", args->baseline,
                "Judge the task's library baseline (its [baseline] file, linked with its libs)");
  cmd->add_option("--threads,-t", args->threads, "Threads for the kernels (OMP_NUM_THREADS)")
      ->check(CLI::Range(1, 256));
  cmd->add_flag("--json", args->json,
                fmt::format("Print the full result as one JSON document (schema \"{}\", "
                            "docs/json.md) instead of text",
                            kEvalSchema));
  cmd->add_option("--seed", args->seed, "Fix the input seed (default: fresh each run)");
  cmd->add_option("--min-time", args->min_time, "Seconds of measured time per solution")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--timeout", args->timeout, "Wall-clock limit per batch of kernel calls (s)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--cxx", args->cxx, "Compiler: g++ or clang++")
      ->check(CLI::IsMember({"g++", "clang++"}));
  cmd->add_option("--flag", args->flags, "Extra compiler flag from the whitelist (repeatable)");
  cmd->add_flag("--no-reference", args->no_reference, "Do not time the reference");
  cmd->add_flag("--vs-baseline", args->vs_baseline,
                "Also time the task's library baseline side by side");
  cmd->add_option("--vs", args->rival,
                  "Also time another solution (.cpp, or .sched lowered from the task's spec) side "
                  "by side; it is compiled like the candidate but not checked")
      ->check(CLI::ExistingFile);
  cmd->add_flag("--no-time", args->no_time, "Check correctness only");
  cmd->add_flag("--profile", args->profile,
                "Then profile it (the profiler role's evidence: roofline, vectorization report, "
                "instruction mix, counters, and for a .sched candidate the time per stage)");
  cmd->add_flag("--quiet,-q", args->quiet, "No progress lines");
  cmd->callback([args] { throw CLI::RuntimeError(run_eval(*args)); });
}

}  // namespace kf
