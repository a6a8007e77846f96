#include "cli/optimize_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <iostream>

#include "agents/brain_config.h"
#include "agents/roles.h"
#include "cli/cli_output.h"
#include "cli/llm_run.h"
#include "cli/strategy_options.h"
#include "cli/worker_command.h"
#include "modes/optimize.h"
#include "modes/optimize_report.h"
#include "modes/progress_bar.h"
#include "search/engine.h"
#include "search/graph.h"
#include "store/sqlite_store.h"
#include "support/interrupt.h"
#include "support/json_text.h"

namespace kf {
namespace {

// `optimize --json`: the run's id, its output folder and its summary (summary.json's content)
// as one document (docs/schemas/optimize.schema.json).
constexpr const char* kOptimizeSchema = "kforge-optimize/1";

struct OptimizeArgs {
  std::string task_dir, resume, store, out;
  int budget_evals = 40;
  double budget_time = 600;
  int threads = 1;
  std::string brain = "builtin";
  std::string sources;
  std::string config;
  std::string target;
  std::string events;
  std::string simulate, record;
  BrokerArgs broker;
  double sim_latency = 0;
  double min_time = 0.3;
  int tune_budget = 8;
  double stop_at = OptimizeOptions{}.stop_fraction;
  bool no_final = false, no_profile = false, remeasure = false;
  agents::StrategyFilter strategies;
  agents::KnobPins pins;
  StartingPoint from;
  std::string stage_times = OptimizeOptions{}.stage_times;
  bool quiet = false;
  bool json = false;       // the summary as one JSON document on stdout, progress lines on stderr
  std::string llm_config;  // the LLM brain's settings ([llm] table)
  std::optional<int64_t> max_tokens;
  std::optional<double> max_cost;
};

Expected<std::unique_ptr<SqliteStore>> open_store(const std::string& path) {
  return SqliteStore::open(path.empty() ? default_store_path() : std::filesystem::path(path));
}

int run_optimize(const OptimizeArgs& a) {
  install_interrupt_handler();  // Ctrl-C stops the run cleanly, resumable
  auto store = open_store(a.store);
  if (!store) {
    print_error(store.error().message());
    return 2;
  }
  std::string resume = a.resume;  // a prefix of one run's id is enough
  if (!resume.empty()) {
    auto run = find_run(**store, resume);
    if (!run) {
      print_error(run.error().message());
      return 2;
    }
    resume = run->id;
  }
  OptimizeOptions o;
  JsonLinesReporter events;
  if (!a.events.empty()) {
    if (Status st = events.open(a.events); !st.ok()) {
      print_error(st.message());
      return 2;
    }
    o.events = &events;
  }
  // Progress lines, and on a terminal the live bar with its estimate of the time left.
  std::unique_ptr<ProgressBar> bar;
  if (!a.quiet && a.json)  // stdout holds the JSON document
    o.progress = [](const std::string& s) { fmt::print(stderr, "{}\n", s); };
  if (!a.quiet && !a.json) {
    bar = std::make_unique<ProgressBar>(o.events, ProgressBar::wanted());
    o.events = bar.get();
    o.progress = [b = bar.get()](const std::string& s) { b->print_line(s); };
  }
  // The LLM brain's session, made when the team (of the run resumed, too) has an LLM role.
  std::unique_ptr<LlmRun> llm;
  std::string spec = a.config.empty() ? a.brain : "";
  if (!a.config.empty())
    if (auto c = agents::read_brain_config(a.config)) spec = c->spec;
  // A resumed run's LLM arguments are the stored ones, each overridden when given again.
  LlmRunArgs llm_args{a.llm_config, a.max_tokens, a.max_cost};
  if (!resume.empty())
    if (auto run = (*store)->get_run(resume)) {
      spec = run->brain;
      if (auto stored = OptimizeOptions::from_json(run->options))
        llm_args = llm_args.over(stored->llm_args);
    }
  if (team_uses_llm(spec)) {
    o.llm_args = LlmRun::to_store(llm_args);
    auto made = LlmRun::make(llm_args, **store, o.events);
    if (!made) {
      print_error(made.error().message());
      return 2;
    }
    llm = std::move(*made);
    o.events = llm.get();
    o.llm = llm->session();
  }
  o.broker = a.broker;  // on resume too: a URL given again (with its password) is used
  Expected<OptimizeResult> r = Status::error("no task");
  if (!resume.empty()) {
    r = resume_optimize(resume, **store, o);
  } else {
    if (a.task_dir.empty()) {
      fmt::print(stderr, "error: name a task directory, or --resume RUN\n");
      return 2;
    }
    o.task_dir = std::filesystem::absolute(a.task_dir);  // export and resume work from anywhere
    o.budget_evals = a.budget_evals;
    o.budget_time_s = a.budget_time;
    o.threads = a.threads;
    o.brain = a.brain;
    o.sources = a.sources;
    if (!a.config.empty()) {
      auto c = agents::read_brain_config(a.config);
      if (!c) {
        print_error(c.error().message());
        return 2;
      }
      o.brain = c->spec;
      if (a.sources.empty()) o.sources = c->options.sources;
    }
    o.target = a.target;
    o.out_dir = a.out;
    o.simulate = a.simulate;
    o.record = a.record;
    o.sim_latency_s = a.sim_latency;
    o.min_time_s = a.min_time;
    o.tune_budget = a.tune_budget;
    o.stop_fraction = a.stop_at;
    o.final_run = !a.no_final;
    o.profile = !a.no_profile;
    o.stage_times = a.stage_times;
    o.remeasure = a.remeasure;
    o.strategies = a.strategies;
    o.pins = a.pins;
    o.from = a.from;
    r = optimize(o, **store);
  }
  if (llm) fmt::print(a.json ? stderr : stdout, "{}", llm->usage_line());
  if (!r) {
    print_error(r.error().message());
    return interrupted_exit_code(2);
  }
  if (a.json) {
    print_json(kOptimizeSchema,
               {{"run", r->run_id}, {"out_dir", r->out_dir.string()}, {"summary", r->summary}});
  } else {
    fmt::print("\n{}", optimize_summary_text(r->summary));
    fmt::print("wrote {}/best.cpp, summary.json, summary.txt\n{}", r->out_dir.string(),
               resume_hint(**store, r->run_id));
  }
  if (!events.status().ok())
    fmt::print(stderr, "warning: {} ({}): its events are incomplete\n", events.status().message(),
               a.events);
  return interrupted_exit_code(0);
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  auto a = std::make_shared<OptimizeArgs>();
  CLI::App* cmd = app.add_subcommand("optimize", "Optimize a task's kernel autonomously");
  cmd->add_option("task", a->task_dir,
                  "Task directory (task.toml; the built-in brain needs its [te] spec)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--resume", a->resume, "Continue an interrupted run (its id, see `kforge runs`)");
  cmd->add_option("--budget-evals", a->budget_evals, "Candidates to judge at most")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--budget-time", a->budget_time, "Seconds of search at most")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--threads,-t", a->threads, "Threads for the kernels")->check(CLI::Range(1, 256));
  cmd->add_option("--brain", a->brain,
                  "A brain for every role (" +
                      fmt::format("{}", fmt::join(agents::brain_names(), ", ")) +
                      "), or ROLE=BRAIN pairs: planner=...,implementer=...,debugger=...,"
                      "tester=...,profiler=...,autotuner=... (default=BRAIN for the rest)")
      ->check(CLI::Validator(
          [](std::string& spec) {
            auto team = agents::parse_team(spec);
            return team ? std::string() : team.error().message();
          },
          "BRAIN"));
  cmd->add_option("--config", a->config,
                  "A team in a file: a [brain] table of ROLE = \"BRAIN\" (and default, sources)")
      ->check(CLI::ExistingFile)
      ->excludes("--brain");
  cmd->add_option("--sources", a->sources,
                  "The files brain's folder of C++ candidates (each with the task's signature)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--target", a->target,
                  "What kernels are generated for: native (the machine's widest), avx512, avx2 or "
                  "scalar; a target the machine lacks is refused")
      ->check(CLI::IsMember({"native", "avx512", "avx2", "scalar"}));
  cmd->add_option("--events", a->events,
                  "Append the run's events to this file as JSON lines (docs/events.md)");
  cmd->add_option("--out", a->out, kOutHelp);
  cmd->add_option("--store", a->store, kStoreHelp);
  cmd->add_option("--simulate", a->simulate,
                  "Replay measurements from a recording instead of judging (no timing noise)");
  cmd->add_option("--record", a->record, "Append every judged result to this recording");
  cmd->add_option("--sim-latency", a->sim_latency, "Seconds per simulated evaluation");
  add_broker_options(cmd, a->broker);
  cmd->add_option("--min-time", a->min_time, "Measured seconds per candidate during the search")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--tune-budget", a->tune_budget, "Autotuner evaluations per accepted strategy")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--stop-at", a->stop_at,
                  "Stop once the best reaches this fraction of the roofline (default 0.9; above 1 "
                  "never: a working set that stays in cache can measure past the DRAM roofline)")
      ->check(CLI::Range(0.0, 1000.0));
  cmd->add_flag("--no-final", a->no_final, "Skip the final side-by-side run");
  cmd->add_flag("--no-profile", a->no_profile, "Skip the compiler report and disassembly");
  cmd->add_option("--stage-times", a->stage_times,
                  "Profile each new best's time per stage (an instrumented build: a compile and "
                  "~0.3 s of calls per best) for the planner to weigh strategies by the time "
                  "they touch: auto (when the best has three or more top-level stages), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  add_steering_options(cmd, a->strategies, a->pins);
  add_from_option(cmd, a->from);
  cmd->add_flag("--remeasure", a->remeasure,
                "Measure every candidate afresh instead of reading back the store's measurements "
                "from earlier runs");
  cmd->add_option("--llm-config", a->llm_config,
                  "The LLM brain's settings: a TOML file's [llm] table (default ./kforge.toml, "
                  "else OPENAI_BASE_URL and OPENAI_API_KEY; docs/llm.md)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-tokens", a->max_tokens,
                  "Stop the run cleanly once its LLM calls used this many tokens")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  cmd->add_option("--max-cost", a->max_cost,
                  "Stop the run cleanly once its LLM calls cost this many US dollars (needs a "
                  "price for the model in the [llm] settings)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--quiet,-q", a->quiet, "No progress lines");
  cmd->add_flag("--json", a->json,
                fmt::format("Print the run's id, output folder and summary as one JSON document "
                            "(schema \"{}\", docs/json.md); progress lines go to stderr",
                            kOptimizeSchema));
  cmd->callback([a] { throw CLI::RuntimeError(run_optimize(*a)); });
}

constexpr const char* kRunsSchema = "kforge-runs/1";
// `kforge show --json`: the run record, its attempts and messages
// (docs/schemas/show.schema.json).
constexpr const char* kShowSchema = "kforge-show/1";

// The runs as a table: long task names are cut so the columns stay aligned.
void print_runs_table(const nlohmann::json& rows) {
  const auto num = [](const nlohmann::json& j, const char* fmt_spec, double scale) {
    return j.is_number() ? fmt::format(fmt::runtime(fmt_spec), j.get<double>() * scale)
                         : std::string("-");
  };
  fmt::print("{:<22} {:<8} {:<11} {:<28} {:>11} {:>7} {:>7} {:>5}  {}\n", "run", "mode", "state",
             "task", "best", "vs ref", "vs lib", "evals", "updated");
  for (const nlohmann::json& r : rows)
    fmt::print("{:<22} {:<8} {:<11} {:<28} {:>11} {:>7} {:>7} {:>5}  {}\n",
               terminal_text(r["id"].get<std::string>()), r["mode"].get<std::string>(),
               r["state"].get<std::string>(),
               column_text(terminal_text(r["task"].get<std::string>()), 28),
               num(r["best_median_s"], "{:.3f} ms", 1e3), num(r["vs_reference"], "{:.2f}x", 1),
               num(r["vs_library"], "{:.2f}x", 1),
               r["evaluations"].is_number() ? std::to_string(r["evaluations"].get<int>()) : "-",
               r["updated_at"].get<std::string>().substr(0, 19));
}

// One run's line of `kforge runs`, as JSON (docs/runs.schema.json, "kforge-runs/1"): what the
// record says, and from its summary the best's median time, its speedups over the reference and
// the library in the final side-by-side run (null when there was none) and the evaluations.
nlohmann::json run_row(const RunRecord& r) {
  const nlohmann::json& s = r.summary;
  const auto number = [](const nlohmann::json& j) -> nlohmann::json {
    return j.is_number() && j.get<double>() > 0 ? j : nlohmann::json();
  };
  nlohmann::json best = nullptr, vs_ref = nullptr, vs_lib = nullptr, evals = nullptr;
  if (s.is_object()) {
    if (s.contains("best") && s["best"].is_object())
      best = number(s["best"].value("median_s", 0.0));
    if (s.contains("final") && s["final"].is_object()) {
      const nlohmann::json& f = s["final"];
      if (f.contains("vs_reference")) vs_ref = number(f["vs_reference"].value("median", 0.0));
      if (f.contains("vs_baseline")) vs_lib = number(f["vs_baseline"].value("median", 0.0));
    }
    if (s.contains("evaluations") && s["evaluations"].is_number_integer()) evals = s["evaluations"];
  }
  return {{"id", r.id},
          {"mode", r.mode},
          {"state", r.state},
          {"task", r.task_name},
          {"task_dir", r.task_dir},
          {"brain", r.brain},
          {"created_at", r.created_at},
          {"updated_at", r.updated_at},
          {"best_median_s", best},
          {"vs_reference", vs_ref},
          {"vs_library", vs_lib},
          {"evaluations", evals}};
}

void add_runs_commands(CLI::App& app) {
  auto store_path = std::make_shared<std::string>();
  auto runs_json = std::make_shared<bool>(false);
  CLI::App* runs = app.add_subcommand("runs", "List the runs in the store, newest first");
  runs->add_option("--store", *store_path, kStoreHelp);
  runs->add_flag("--json", *runs_json,
                 fmt::format("Print the runs as one JSON document (schema \"{}\", docs/json.md)",
                             kRunsSchema));
  runs->callback([store_path, runs_json] {
    auto store = open_store(*store_path);
    if (!store) {
      print_error(store.error().message());
      throw CLI::RuntimeError(2);
    }
    auto list = (*store)->list_runs();
    if (!list) {
      print_error(list.error().message());
      throw CLI::RuntimeError(2);
    }
    nlohmann::json rows = nlohmann::json::array();
    for (const RunRecord& r : *list) rows.push_back(run_row(r));
    if (*runs_json) {
      print_json(kRunsSchema, {{"runs", rows}});
      throw CLI::RuntimeError(0);
    }
    print_runs_table(rows);
    throw CLI::RuntimeError(0);
  });

  auto show = std::make_shared<std::pair<std::string, std::string>>();
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("show", "Print one run: its attempts and its result");
  cmd->add_option("run", show->first, "Run id (or a prefix of exactly one)")->required();
  cmd->add_option("--store", show->second, kStoreHelp);
  cmd->add_flag("--json", *json,
                fmt::format("Print the run, its attempts and messages as one JSON document "
                            "(schema \"{}\", docs/json.md)",
                            kShowSchema));
  cmd->callback([show, json] {
    auto store = open_store(show->second);
    if (!store) {
      print_error(store.error().message());
      throw CLI::RuntimeError(2);
    }
    auto run = find_run(**store, show->first);
    if (!run) {
      print_error(run.error().message());
      throw CLI::RuntimeError(2);
    }
    auto attempts = (*store)->attempts(run->id);
    auto messages = (*store)->messages(run->id);
    if (!attempts || !messages) {
      print_error(!attempts ? attempts.error().message() : messages.error().message());
      throw CLI::RuntimeError(2);
    }
    if (*json) {
      nlohmann::json j = run->to_json();
      j["attempts"] = nlohmann::json::array();
      for (const auto& a : *attempts) j["attempts"].push_back(a.to_json());
      j["messages"] = nlohmann::json::array();
      for (const auto& m : *messages) j["messages"].push_back(m.to_json());
      print_json(kShowSchema, std::move(j));
      throw CLI::RuntimeError(0);
    }
    fmt::print("run {} ({} on {}, brain {}): {}, created {}, updated {}\n", run->id, run->mode,
               run->task_name, run->brain, run->state, run->created_at, run->updated_at);
    fmt::print("{} attempts, {} messages\n", attempts->size(), messages->size());
    // 'ref': the reference's time over the attempt's (modes/run_log.h, "Anchors").
    fmt::print("  {:>3} {:<9} {:<30} {:<15} {:>12} {:>8}\n", "", "kind", "strategy", "verdict",
               "median", "ref");
    for (const auto& a : *attempts) {
      const std::string strategy = column_text(terminal_text(a.strategy), 30);
      const double vs = a.detail.is_object() ? a.detail.value("vs_reference", 0.0) : 0.0;
      fmt::print("  {:>3} {:<9} {:<30} {:<15} {:>12} {:>8}\n", a.seq, a.kind, strategy, a.verdict,
                 a.median_s > 0 ? fmt::format("{:.3f} ms", a.median_s * 1e3) : "-",
                 vs > 0 ? fmt::format("{:.2f}x", vs) : "-");
    }
    // The planner's reasons, in the order it gave them.
    bool plans_header = false;
    for (const MessageRecord& m : *messages) {
      if (m.type != "Plan" || !m.body.is_object()) continue;
      const std::string strategy = m.body.value("strategy", std::string());
      const std::string why = m.body.value("why", std::string());
      if (strategy.empty() || why.empty()) continue;
      if (!plans_header) fmt::print("\nthe planner's reasons:\n");
      plans_header = true;
      fmt::print("  {}: {}\n", terminal_text(strategy), terminal_text(why));
    }
    if (run->mode == "search" || run->mode == "chat")
      fmt::print("\nsearch graph:\n{}", search::tree_text(*attempts));
    const bool summarized = run->summary.is_object() && run->summary.contains("best");
    if (run->state != "running" && run->state != "failed" && summarized)
      fmt::print("\n{}{}", optimize_summary_text(run->summary),
                 search::search_summary_text(run->summary));
    fmt::print("{}", resume_hint(**store, run->id));
    throw CLI::RuntimeError(0);
  });
}

}  // namespace kf
