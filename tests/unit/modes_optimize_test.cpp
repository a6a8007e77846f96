// The optimize loop end to end (modes/optimize.h) on a small task with the real judge and tiny
// budgets, then through the recorded judge: the simulation replays the same decisions, and a run
// interrupted at any store write resumes to the same attempts and the same best.
//
// Nothing here asserts speed: the real run only has to judge its candidates ok, and everything
// that depends on a measured time is compared against the recording, never against a number.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "optimize_test_util.h"

namespace kf {
namespace {

using namespace optimize_test;

TEST_F(OptimizeLoop, BestIsOkAndTheBudgetIsSpent) {
  const OptimizeResult& r = *result_;
  EXPECT_EQ(r.best_result.verdict, Verdict::ok) << r.best_result.message;
  ASSERT_TRUE(r.best_result.timing.has_value());
  EXPECT_GT(r.best_result.timing->median_s, 0);
  EXPECT_FALSE(r.best.key.empty());
  EXPECT_FALSE(r.best.source.empty());
  EXPECT_EQ(r.evaluations, 5);
  EXPECT_EQ(r.stop_reason, "evaluation budget spent");
  EXPECT_FALSE(r.final_result.has_value()) << "final_run is off";
  EXPECT_GE(r.attempts, r.evaluations);
}

TEST_F(OptimizeLoop, AttemptsAreStoredInSequence) {
  const OptimizeResult& r = *result_;
  auto attempts = store_->attempts(r.run_id);
  ASSERT_TRUE(attempts);
  ASSERT_EQ(static_cast<int>(attempts->size()), r.attempts);
  int with_evaluation = 0;
  std::set<std::string> evaluation_keys;
  for (size_t i = 0; i < attempts->size(); ++i) {
    const AttemptRecord& a = (*attempts)[i];
    EXPECT_EQ(a.seq, static_cast<int>(i) + 1);
    EXPECT_EQ(a.run_id, r.run_id);
    if (a.evaluation_key.empty()) {
      EXPECT_EQ(a.verdict, "not_applicable") << a.strategy;
      continue;
    }
    ++with_evaluation;
    evaluation_keys.insert(a.evaluation_key);
    auto e = store_->find_evaluation(a.evaluation_key);
    ASSERT_TRUE(e && e->has_value()) << a.evaluation_key;
    EXPECT_EQ((*e)->candidate_key, a.candidate_key);
    EXPECT_EQ((*e)->verdict, a.verdict);
    EXPECT_EQ((*e)->task, "f64_layernorm");
    EXPECT_FALSE((*e)->machine.starts_with("simulated:")) << "measured for real";
    auto c = store_->get_candidate(a.candidate_key);
    ASSERT_TRUE(c && c->has_value()) << a.candidate_key;
    EXPECT_FALSE((*c)->source.empty());
    EXPECT_TRUE((*c)->provenance.contains("origin"));
  }
  EXPECT_EQ(with_evaluation, r.evaluations);
  auto count = store_->count_evaluations();
  ASSERT_TRUE(count);
  EXPECT_EQ(*count, static_cast<int64_t>(evaluation_keys.size()))
      << "each distinct candidate is measured once; a repeat is read back";
  EXPECT_EQ(static_cast<int>(evaluation_keys.size()), r.evaluations - r.reused);

  const AttemptRecord& first = attempts->front();
  EXPECT_EQ(first.kind, "baseline");
  EXPECT_EQ(first.strategy, "default");
  EXPECT_EQ(first.verdict, "ok");
  EXPECT_GT(first.median_s, 0);
  for (size_t i = 1; i < attempts->size(); ++i) {
    const AttemptRecord& a = (*attempts)[i];
    EXPECT_TRUE(a.kind == "plan" || a.kind == "tune" || a.kind == "debug" || a.kind == "confirm")
        << a.kind;
    // A near miss is measured again: the best, then the candidate, back to back.
    if (a.kind == "confirm") {
      EXPECT_TRUE(a.strategy.starts_with("confirm:")) << a.strategy;
    }
    if (a.verdict == "ok") {
      EXPECT_DOUBLE_EQ(a.speedup, first.median_s / a.median_s) << "speedup over the naive one";
    }
  }
}

TEST_F(OptimizeLoop, RunIsFinishedWithItsBest) {
  const OptimizeResult& r = *result_;
  auto run = store_->get_run(r.run_id);
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->state, "finished");
  EXPECT_EQ(run->mode, "optimize");
  EXPECT_EQ(run->brain, "builtin");
  EXPECT_EQ(run->task_name, "f64_layernorm");
  EXPECT_EQ(run->best_candidate, r.best.key);
  EXPECT_EQ(run->summary["best"]["key"], r.best.key);
  auto options = OptimizeOptions::from_json(run->options);
  ASSERT_TRUE(options) << options.error().message();
  EXPECT_EQ(options->budget_evals, 5);
  EXPECT_EQ(options->tune_budget, 1);
  EXPECT_TRUE(run->options.contains("started_epoch_s"));
  auto best = store_->get_candidate(r.best.key);
  ASSERT_TRUE(best && best->has_value());
  EXPECT_EQ((*best)->source, r.best.source);
}

TEST_F(OptimizeLoop, MessagesAreTheConversation) {
  const OptimizeResult& r = *result_;
  auto messages = store_->messages(r.run_id);
  ASSERT_TRUE(messages);
  ASSERT_FALSE(messages->empty());
  std::set<std::string> types;
  for (size_t i = 0; i < messages->size(); ++i) {
    const MessageRecord& m = (*messages)[i];
    EXPECT_EQ(m.seq, static_cast<int>(i) + 1);
    types.insert(m.type);
    if (m.type == "Plan") {
      EXPECT_EQ(m.from_role, "planner");
      EXPECT_EQ(m.to_role, "implementer");
      EXPECT_TRUE(m.body.contains("strategy"));
      EXPECT_TRUE(m.body.contains("why"));
    }
    if (m.type == "Candidate") {
      EXPECT_EQ(m.from_role, "implementer");
      EXPECT_FALSE(m.body.contains("source")) << "sources live in the candidates table";
    }
  }
  EXPECT_EQ(messages->front().type, "Profile");
  for (const char* t : {"Profile", "Plan", "Candidate", "TestReport"})
    EXPECT_TRUE(types.count(t)) << t;
}

TEST_F(OptimizeLoop, OutputsAreWritten) {
  const OptimizeResult& r = *result_;
  EXPECT_EQ(r.out_dir, temp_root() / "real");
  auto cpp = read_file(r.out_dir / "best.cpp");
  ASSERT_TRUE(cpp) << cpp.error().message();
  EXPECT_EQ(*cpp, r.best.source);
  auto sched = read_file(r.out_dir / "best.sched");
  ASSERT_TRUE(sched);
  EXPECT_TRUE(sched->starts_with("# f64_layernorm: ")) << *sched;
  auto json = read_file(r.out_dir / "summary.json");
  ASSERT_TRUE(json);
  auto j = nlohmann::json::parse(*json);
  EXPECT_EQ(j["run"], r.run_id);
  EXPECT_EQ(j["task"], "f64_layernorm");
  EXPECT_EQ(j["best"]["key"], r.best.key);
  EXPECT_EQ(j["evaluations"], 5);
  EXPECT_EQ(j["attempts"], r.attempts);
  EXPECT_EQ(j["journey"].size(), static_cast<size_t>(r.attempts));
  EXPECT_FALSE(j.contains("final"));
  auto txt = read_file(r.out_dir / "summary.txt");
  ASSERT_TRUE(txt);
  EXPECT_TRUE(txt->starts_with("kforge optimize: run " + r.run_id + " on f64_layernorm")) << *txt;
  EXPECT_NE(txt->find("best: " + r.best.describe()), std::string::npos) << *txt;
}

TEST_F(OptimizeLoop, ProgressHasALinePerEvaluation) {
  int evaluation_lines = 0;
  for (const std::string& l : *progress_) evaluation_lines += l.starts_with("[");
  EXPECT_EQ(evaluation_lines, result_->evaluations);
  ASSERT_FALSE(progress_->empty());
  EXPECT_TRUE(progress_->front().starts_with("run " + result_->run_id)) << progress_->front();
  EXPECT_EQ(progress_->back(), "stop: evaluation budget spent");
}

TEST_F(OptimizeLoop, RecordingHasEveryMeasurement) {
  std::ifstream in(*recording_);
  int lines = 0;
  for (std::string l; std::getline(in, l);) lines += !l.empty();
  EXPECT_EQ(lines, result_->evaluations - result_->reused);
}

TEST_F(OptimizeLoop, SimulationReplaysTheSameDecisions) {
  const std::vector<Step> real = steps_of(*store_, result_->run_id);
  MemoryStore s1, s2;
  auto a = simulate(s1, "sim1");
  ASSERT_TRUE(a) << a.error().message();
  auto b = simulate(s2, "sim2");
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(steps_of(s1, a->run_id), real) << "the recording replays the real run";
  EXPECT_EQ(steps_of(s2, b->run_id), real) << "and does so every time";
  EXPECT_EQ(message_types(s1, a->run_id), message_types(*store_, result_->run_id));
  EXPECT_EQ(a->best.key, result_->best.key);
  EXPECT_EQ(b->best.key, result_->best.key);
  EXPECT_EQ(a->evaluations, result_->evaluations);
  EXPECT_EQ(a->stop_reason, result_->stop_reason);
  EXPECT_DOUBLE_EQ(a->best_result.timing->median_s, result_->best_result.timing->median_s);
  // Simulated measurements are kept apart from real ones.
  auto attempts = s1.attempts(a->run_id);
  ASSERT_TRUE(attempts);
  auto e = s1.find_evaluation(attempts->front().evaluation_key);
  ASSERT_TRUE(e && e->has_value());
  EXPECT_TRUE((*e)->machine.starts_with("simulated:")) << (*e)->machine;
  EXPECT_NE(attempts->front().evaluation_key,
            (*store_->attempts(result_->run_id))[0].evaluation_key);
}

// A second run on the same store reads the first one's measurements back, at no cost to its
// budget; with remeasure it measures every candidate again (and its own measurements stay apart
// from the first's).
TEST_F(OptimizeLoop, ASecondRunReusesMeasurementsUnlessAskedToRemeasure) {
  MemoryStore s;
  auto first = simulate(s, "reuse1");
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(first->reused, 0);
  EXPECT_EQ(first->borrowed, 0);
  const int64_t measured_first = *s.count_evaluations();
  auto again = simulate(s, "reuse2");
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_EQ(again->borrowed, first->evaluations) << "the same path, every step read back";
  // Its budget went to candidates the first run did not reach (past the recording: each judged
  // a crash by the simulation, and stored all the same), and to those it met twice.
  if (first->stop_reason == "evaluation budget spent") {
    EXPECT_GE(again->evaluations, 1);
  }
  EXPECT_EQ(*s.count_evaluations(), measured_first + again->evaluations - again->reused);
  OptimizeOptions o = simulated("reuse3");
  o.remeasure = true;
  auto fresh = optimize(o, s);
  ASSERT_TRUE(fresh) << fresh.error().message();
  EXPECT_EQ(fresh->reused, 0);
  EXPECT_EQ(fresh->evaluations, first->evaluations);
  EXPECT_EQ(fresh->best.key, first->best.key);
}

// With a small budget the autotuner gets at most a third of what is left after each accepted
// strategy, so it cannot spend the whole budget on the first strategy's knobs.
TEST_F(OptimizeLoop, ASmallBudgetIsNotSpentOnOneStrategysKnobs) {
  MemoryStore s;
  OptimizeOptions o = simulated("small_budget");
  o.budget_evals = 8;
  o.tune_budget = 8;
  auto r = optimize(o, s);
  ASSERT_TRUE(r) << r.error().message();
  int streak = 0, longest = 0, tunes = 0;
  for (const Step& st : steps_of(s, r->run_id)) {
    streak = st.kind == "tune" ? streak + 1 : 0;
    tunes += st.kind == "tune";
    longest = std::max(longest, streak);
  }
  // Whether any tuning trial runs at all depends on the shared real recording (which plan won
  // on this machine's load, and whether its knobs have values left to measure); the limit on a
  // streak does not.
  EXPECT_LE(longest, 2) << "8 evaluations: baseline and a plan leave 6, a third of that is 2";
  EXPECT_LE(tunes, 8 - 2) << "the baseline and at least one plan";
}

// A budget below three tuning rounds defers each accepted step's knobs until the best remaining
// plan expects less than ~1.15x (or the strategies run out): every tuning trial follows one of
// those two announcements, never an accepted plan directly.
TEST_F(OptimizeLoop, ASmallBudgetTunesOnlyWhenTheStrategiesLeftExpectLittle) {
  MemoryStore s;
  OptimizeOptions o = simulated("deferred_tuning");
  o.budget_evals = 8;
  o.tune_budget = 3;  // 8 < 3 * 3
  std::vector<std::string> lines;
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  auto r = optimize(o, s);
  ASSERT_TRUE(r) << r.error().message();
  int tunes = 0, plans = 0;
  std::string cause;  // the announcement the next tuning trials follow ("" once a plan ran)
  for (const std::string& l : lines) {
    if (l.find("tuning the newest step's knobs first") != std::string::npos ||
        l.find("out of strategies: tuning the whole recipe") != std::string::npos) {
      cause = l;
      continue;
    }
    if (!l.starts_with("[")) continue;
    const bool tune = l.find("] tune ") != std::string::npos;
    const bool plan = l.find("] plan ") != std::string::npos;
    tunes += tune;
    plans += plan;
    if (tune) {
      EXPECT_FALSE(cause.empty()) << "a tuning trial right after a plan: " << l;
    }
    if (plan) cause.clear();
  }
  EXPECT_GE(plans, 1);
  // Whether a deferred tuning then measures anything is not decided here: the shared recording
  // is a real run, and the newest step may have no knobs, or every trial value may fail to
  // realize or be a recipe measured already (the autotuner skips those without measuring).
  EXPECT_LE(tunes, 8 - plans - 1);
  // The first announcement, when there is one, names the plan's expectation.
  for (const std::string& l : lines)
    if (l.find("the best remaining plan expects ~") != std::string::npos) {
      const double x = std::stod(l.substr(l.find('~') + 1));
      EXPECT_LT(x, 1.15) << l;
    }
}

TEST_F(OptimizeLoop, SimulationWithASmallerBudgetIsAPrefix) {
  const std::vector<Step> real = steps_of(*store_, result_->run_id);
  MemoryStore s;
  OptimizeOptions o = simulated("sim_prefix");
  o.budget_evals = 1;
  auto r = optimize(o, s);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->evaluations, 1);
  EXPECT_EQ(r->stop_reason, "evaluation budget spent");
  EXPECT_TRUE(agents::builtin::recipe_of(&r->best).steps.empty())
      << "only the naive candidate was judged";
  const std::vector<Step> steps = steps_of(s, r->run_id);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0], real[0]);
}

TEST_F(OptimizeLoop, OutOfStrategiesTheWholeRecipeIsTunedOnceThenTheRunStops) {
  // The recording replayed with a budget far past it: a candidate it lacks is judged a crash, so
  // nothing new wins and the planner runs out of strategies. Before stopping, the loop sweeps the
  // knobs of every step of the best recipe once (the trailing tune attempts), finds nothing
  // faster, tries the catalog's other moves that apply to the best (the local search: which ones
  // apply depends on the best the real run found, so there may be none), and stops with the
  // recorded best.
  MemoryStore s;
  OptimizeOptions o = simulated("sim_exhausted");
  o.budget_evals = 200;
  o.tune_budget = 3;
  std::vector<std::string> lines;
  o.progress = [&](const std::string& l) { lines.push_back(l); };
  auto r = optimize(o, s);
  ASSERT_TRUE(r) << r.error().message();
  // The local search's announcement says how many moves apply; each is one attempt at the end.
  size_t explored = 0;
  for (const std::string& l : lines)
    if (l.starts_with("out of strategies with ")) {
      const size_t at = l.find("trying the catalog's ");
      ASSERT_NE(at, std::string::npos) << l;
      explored = std::stoul(l.substr(at + std::strlen("trying the catalog's ")));
      EXPECT_GT(explored, 0u) << l;
    }
  const std::string rules_done =
      "every strategy the rules suggest was tried from this best or does not apply; ";
  EXPECT_EQ(r->stop_reason,
            rules_done + (explored == 0 ? "no other move of the catalog applies to the best"
                                        : "none of the catalog's other moves was faster"));
  EXPECT_EQ(r->best.key, result_->best.key);
  EXPECT_LT(r->evaluations, o.budget_evals);
  EXPECT_EQ(std::count(lines.begin(), lines.end(),
                       "out of strategies: tuning the whole recipe's knobs once more"),
            1);
  // Every other value of every knob of the best recipe, up to twice the tuning budget.
  int others = 0;
  for (const auto& step : agents::builtin::recipe_of(&r->best).steps)
    for (const auto& k : agents::find_strategy(step.strategy)->knobs)
      others += static_cast<int>(k.values.size()) - 1;
  std::vector<Step> steps = steps_of(s, r->run_id);
  ASSERT_GE(steps.size(), explored);
  for (size_t i = steps.size() - explored; i < steps.size(); ++i)
    EXPECT_EQ(steps[i].kind, "plan") << "a move of the local search: " << steps[i];
  steps.resize(steps.size() - explored);
  int trailing = 0;
  for (auto it = steps.rbegin(); it != steps.rend() && it->kind == "tune"; ++it) ++trailing;
  if (others == 0) GTEST_SKIP() << "the recorded best (a real run) has no knobs to sweep";
  const int expected = std::min(others, 2 * o.tune_budget);
  EXPECT_LE(trailing, expected);
  // The sweep never measures a recipe twice: a value the tuning after an accepted step measured
  // already is skipped. Whatever the sweep leaves out, the run tuned before, on the best's steps.
  std::set<std::string> best_steps;
  for (const auto& step : agents::builtin::recipe_of(&r->best).steps)
    best_steps.insert(step.strategy);
  int tuned_before = 0;
  for (size_t i = 0; i + trailing < steps.size(); ++i) {
    if (steps[i].kind != "tune") continue;
    for (const std::string& st : best_steps)
      tuned_before += steps[i].strategy.starts_with("autotune:" + st + ".");
  }
  EXPECT_GE(trailing + tuned_before, expected)
      << trailing << " values swept at the end, " << tuned_before << " tuned before";
}

TEST_F(OptimizeLoop, ANaiveScheduleTooSlowToTimeDoesNotStopTheRun) {
  // The recording with the naive candidate's measurement turned into a timeout (a default
  // schedule that runs past the limit at the bench shape): the loop plans from the program's
  // structure and the first candidate judged ok becomes the best.
  auto text = read_file(*recording_);
  ASSERT_TRUE(text.has_value());
  std::istringstream in(*text);
  std::string out, line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first) {
      nlohmann::json x = nlohmann::json::parse(line);
      x["result"]["verdict"] = "timeout";
      x["result"]["message"] = "ran past the 30 s limit";
      x["result"].erase("timing");
      line = x.dump();
      first = false;
    }
    out += line + "\n";
  }
  const fs::path rec = temp_root() / "naive_timeout.jsonl";
  ASSERT_TRUE(write_file_atomic(rec, out).ok());
  MemoryStore s;
  OptimizeOptions o = small_options("naive_timeout");
  o.simulate = rec.string();
  std::vector<std::string> lines;
  o.progress = [&](const std::string& l) { lines.push_back(l); };
  auto r = optimize(o, s);
  ASSERT_TRUE(r) << r.error().message();
  const std::vector<Step> steps = steps_of(s, r->run_id);
  ASSERT_GE(steps.size(), 2u);
  EXPECT_EQ(steps[0].verdict, "timeout");
  EXPECT_FALSE(agents::builtin::recipe_of(&r->best).steps.empty())
      << "a planned candidate became the best";
  EXPECT_EQ(r->best_result.verdict, Verdict::ok);
  EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("the first candidate (default schedule) ran past the time limit") !=
           std::string::npos;
  }));
}

// ---- Must-fail ----------------------------------------------------------------------------

TEST(OptimizeErrors, UnknownRunIsAnError) {
  MemoryStore store;
  auto r = resume_optimize("r-no-such-run", store, {});
  EXPECT_FALSE(r);
}

TEST(OptimizeErrors, ARunOfAnotherModeIsNotResumed) {
  MemoryStore store;
  ASSERT_TRUE(store
                  .create_run({.id = "r1",
                               .task_dir = kTask.string(),
                               .task_name = "x",
                               .mode = "search",
                               .brain = "builtin"})
                  .ok());
  auto r = resume_optimize("r1", store, {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "run r1 is a search run");
}

TEST(OptimizeErrors, TaskWithoutATeSpec) {
  const fs::path dir = temp_root() / "no_te";
  fs::create_directories(dir);
  auto toml = read_file(kTask / "task.toml");
  ASSERT_TRUE(toml);
  const std::string text = toml->substr(0, toml->find("[te]"));
  ASSERT_TRUE(write_file_atomic(dir / "task.toml", text).ok());
  fs::copy_file(kTask / "reference.cpp", dir / "reference.cpp",
                fs::copy_options::overwrite_existing);
  MemoryStore store;
  OptimizeOptions o = small_options("no_te");
  o.task_dir = dir;
  auto r = optimize(o, store);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("f64_layernorm has no TE spec"), std::string::npos)
      << r.error().message();
  EXPECT_TRUE(store.list_runs()->empty()) << "nothing is stored for a run that cannot start";
}

TEST(OptimizeErrors, UnknownBrain) {
  MemoryStore store;
  OptimizeOptions o = small_options("bad_brain");
  o.brain = "oracle";
  auto r = optimize(o, store);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("unknown brain 'oracle'"), std::string::npos);
}

TEST(OptimizeErrors, MissingRecording) {
  MemoryStore store;
  OptimizeOptions o = small_options("no_recording");
  o.simulate = (temp_root() / "missing.jsonl").string();
  auto r = optimize(o, store);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "cannot read the recording " + o.simulate);
}

TEST(OptimizeErrors, ARecordingOfAnotherTaskFailsTheNaiveCandidate) {
  const fs::path rec = temp_root() / "empty.jsonl";
  ASSERT_TRUE(write_file_atomic(rec, "").ok());
  MemoryStore store;
  OptimizeOptions o = small_options("empty_recording");
  o.simulate = rec.string();
  auto r = optimize(o, store);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find(
                "the first candidate (default schedule) was judged crash: simulation: no "
                "recorded measurement"),
            std::string::npos)
      << r.error().message();
}

TEST(OptimizeOptionsJson, RoundTrip) {
  OptimizeOptions o;
  o.task_dir = "bench/jaxbench/12_rmsnorm";
  o.budget_evals = 12;
  o.budget_time_s = 30;
  o.threads = 4;
  o.out_dir = "out";
  o.cxx = "clang++";
  o.min_time_s = 0.1;
  o.final_min_time_s = 0.5;
  o.stop_fraction = 0.7;
  o.tune_budget = 2;
  o.final_run = false;
  o.profile = false;
  o.seed = 99;
  o.simulate = "a.jsonl";
  o.record = "b.jsonl";
  o.sim_latency_s = 0.25;
  o.stage_times = "on";
  o.stage_time_s = 0.5;
  o.remeasure = true;
  auto back = OptimizeOptions::from_json(nlohmann::json::parse(o.to_json().dump()));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->to_json(), o.to_json());
  EXPECT_EQ(back->task_dir, o.task_dir);
  EXPECT_EQ(back->seed, 99u);
  EXPECT_FALSE(back->final_run);

  auto bad = OptimizeOptions::from_json({{"budget_evals", 3}});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "run options: missing task_dir");
  bad = OptimizeOptions::from_json({{"task_dir", "x"}, {"budget_evals", "many"}});
  ASSERT_FALSE(bad);
  EXPECT_TRUE(bad.error().message().starts_with("run options: ")) << bad.error().message();
}

// The final summary says how close the best's outputs came to the task's tolerance: a pass with
// the worst element near its bound is a thin margin that another input seed may break.
TEST(OptimizeSummary, SaysHowCloseTheBestCameToItsToleranceBound) {
  auto task = load_task(testing::source_dir() / "bench/jaxbench/12_rmsnorm");
  ASSERT_TRUE(task) << task.error().message();
  OptimizeOptions o;
  OptimizeResult r;
  auto check = [](bool passed, double ratio) {
    return CheckRecord{.shape = "N=4", .passed = passed, .worst_ratio = ratio};
  };
  r.best_result.checks = {check(true, 0.2), check(true, 0.35)};
  RunResult final_run;
  final_run.checks = {check(true, 0.3)};
  r.final_result = final_run;
  nlohmann::json s = optimize_summary(*task, o, r, 1.0, {});
  EXPECT_DOUBLE_EQ(s["final"]["worst_error_ratio"].get<double>(), 0.35)
      << "the search's checks count";
  std::string text = optimize_summary_text(s);
  EXPECT_NE(text.find("worst element at 0.35 of its tolerance bound\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("thin margin"), std::string::npos) << text;

  r.final_result->checks.push_back(check(true, 0.93));
  r.final_result->checks.push_back(check(false, 40.0));  // a failure is a verdict, not a margin
  s = optimize_summary(*task, o, r, 1.0, {});
  EXPECT_DOUBLE_EQ(s["final"]["worst_error_ratio"].get<double>(), 0.93);
  text = optimize_summary_text(s);
  EXPECT_NE(text.find("worst element at 0.93 of its tolerance bound (a thin margin"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace kf
