#include "cli/search_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/cli_output.h"
#include "cli/llm_run.h"
#include "cli/strategy_options.h"
#include "cli/worker_command.h"
#include "modes/optimize_report.h"
#include "modes/progress_bar.h"
#include "search/engine.h"
#include "store/sqlite_store.h"
#include "support/interrupt.h"

namespace kf {
namespace {

// `search --json`: the run's id, its output folder and its summary (summary.json's content)
// as one document (docs/schemas/search.schema.json).
constexpr const char* kSearchSchema = "kforge-search/1";

struct SearchArgs {
  std::string task_dir, resume, store, out, events;
  search::SearchOptions o;
  bool no_final = false, quiet = false;
  bool json = false;  // the summary as one JSON document on stdout, progress lines on stderr
  LlmRunArgs llm;     // --llm-config, --max-tokens, --max-cost
};

int run_search(SearchArgs& a) {
  install_interrupt_handler();  // Ctrl-C stops the search cleanly, resumable
  auto store =
      SqliteStore::open(a.store.empty() ? default_store_path() : std::filesystem::path(a.store));
  if (!store) {
    print_error(store.error().message());
    return 2;
  }
  JsonLinesReporter events;
  if (!a.events.empty()) {
    if (Status st = events.open(a.events); !st.ok()) {
      print_error(st.message());
      return 2;
    }
    a.o.events = &events;
  }
  // Progress lines, and on a terminal the live bar with its estimate of the time left.
  std::unique_ptr<ProgressBar> bar;
  if (!a.quiet && a.json)  // stdout holds the JSON document
    a.o.progress = [](const std::string& s) { fmt::print(stderr, "{}\n", s); };
  if (!a.quiet && !a.json) {
    bar = std::make_unique<ProgressBar>(a.o.events, ProgressBar::wanted());
    a.o.events = bar.get();
    a.o.progress = [b = bar.get()](const std::string& s) { b->print_line(s); };
  }
  if (!a.resume.empty()) {  // a prefix of one run's id is enough
    auto run = find_run(**store, a.resume);
    if (!run) {
      print_error(run.error().message());
      return 2;
    }
    a.resume = run->id;
  }
  // The LLM brain's session when the team (of the run resumed, too) has an LLM role; a resumed
  // run's stored arguments are used unless given again.
  std::unique_ptr<LlmRun> llm;
  std::string spec = a.o.brain;
  if (!a.resume.empty())
    if (auto run = (*store)->get_run(a.resume)) {
      spec = run->brain;
      if (auto stored = search::SearchOptions::from_json(run->options))
        a.llm = a.llm.over(stored->llm_args);
    }
  if (team_uses_llm(spec)) {
    a.o.llm_args = LlmRun::to_store(a.llm);
    auto made = LlmRun::make(a.llm, **store, a.o.events);
    if (!made) {
      print_error(made.error().message());
      return 2;
    }
    llm = std::move(*made);
    a.o.events = llm.get();
    a.o.llm = llm->session();
  }
  Expected<search::SearchResult> r = Status::error("no task");
  if (!a.resume.empty()) {
    r = search::resume_search(a.resume, **store, a.o);
  } else {
    if (a.task_dir.empty()) {
      fmt::print(stderr, "error: name a task directory, or --resume RUN\n");
      return 2;
    }
    a.o.task_dir = std::filesystem::absolute(a.task_dir);  // export and resume work from anywhere
    a.o.out_dir = a.out;
    a.o.final_run = !a.no_final;
    r = search::search(a.o, **store);
  }
  if (llm) fmt::print(a.json ? stderr : stdout, "{}", llm->usage_line());
  if (!r) {
    print_error(r.error().message());
    return interrupted_exit_code(2);
  }
  if (a.json) {
    print_json(kSearchSchema,
               {{"run", r->run_id}, {"out_dir", r->out_dir.string()}, {"summary", r->summary}});
  } else {
    fmt::print("\n{}{}", optimize_summary_text(r->summary),
               search::search_summary_text(r->summary));
    fmt::print("wrote {}/best.cpp, summary.json, summary.txt\n{}", r->out_dir.string(),
               resume_hint(**store, r->run_id));
  }
  return interrupted_exit_code(0);
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto a = std::make_shared<SearchArgs>();
  search::SearchOptions& o = a->o;
  CLI::App* cmd = app.add_subcommand(
      "search", "Search the design space of a task's kernel as a graph, with a policy");
  cmd->add_option("task", a->task_dir, "Task directory (task.toml, reference.cpp)")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--resume", a->resume, "Continue a search that was killed (its run id)");
  cmd->add_option("--policy", o.policy, "How the next candidates are chosen")
      ->check(CLI::IsMember(search::policy_names()));
  cmd->add_option("--budget-evals", o.budget_evals, "Candidates to judge at most")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--budget-time", o.budget_time_s, "Seconds of search at most")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--jobs,-j", o.jobs, "Candidates compiled at once (timings never overlap)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--seed", o.seed, "Seed of the policy's choices and of the inputs");
  cmd->add_option("--threads,-t", o.threads, "Threads for the kernels")->check(CLI::Range(1, 256));
  cmd->add_option("--brain", o.brain, "A team spec, as for optimize (default builtin)");
  cmd->add_option("--sources", o.sources, "The files brain's folder of C++ candidates")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--target", o.target, "native, avx512, avx2 or scalar")
      ->check(CLI::IsMember({"native", "avx512", "avx2", "scalar"}));
  cmd->add_option("--min-time", o.min_time_s, "Measured seconds per candidate")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--refine-share", o.refine_share,
                  "Share of the budget kept for refining the fastest nodes' knobs (default 0.15)")
      ->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--beam-width", o.policy_options.beam_width, "beam: nodes kept per round")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--population", o.policy_options.population, "evolve: members per island")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--islands", o.policy_options.islands, "evolve: islands")
      ->check(CLI::Range(1, 16));
  cmd->add_option("--events", a->events, "Append the run's events to this file as JSON lines");
  cmd->add_option("--out", a->out, kOutHelp);
  cmd->add_option("--store", a->store, kStoreHelp);
  cmd->add_option("--simulate", o.simulate,
                  "Replay measurements from a recording instead of judging");
  cmd->add_option("--record", o.record, "Append every judged result to this recording");
  cmd->add_option("--sim-latency", o.sim_latency_s, "Seconds per simulated evaluation");
  add_broker_options(cmd, o.broker);
  cmd->add_flag("--remeasure", o.remeasure, "Measure every candidate afresh");
  cmd->add_flag("--count-stored", o.count_stored,
                "Read-backs of earlier runs' measurements spend budget too (runs compared in one "
                "store judge equally many candidates)");
  add_steering_options(cmd, o.strategies, o.pins);
  add_from_option(cmd, o.from);
  cmd->add_flag("--no-final", a->no_final, "Skip the final side-by-side run");
  add_llm_options(cmd, a->llm);
  cmd->add_flag("--quiet,-q", a->quiet, "No progress lines");
  cmd->add_flag("--json", a->json,
                fmt::format("Print the run's id, output folder and summary as one JSON document "
                            "(schema \"{}\", docs/json.md); progress lines go to stderr",
                            kSearchSchema));
  cmd->callback([a] { throw CLI::RuntimeError(run_search(*a)); });
}

}  // namespace kf
