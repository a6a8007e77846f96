// The built-in implementer, debugger, tester and autotuner in isolation
// (agents/builtin/roles.cpp). Judged results are written by hand; the autotuner measures with a
// fake RecipeMeasureFn whose time is a known function of the knobs.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "agents/builtin/brain.h"
#include "agents/judge.h"
#include "lower_test_util.h"

namespace kf::agents::builtin {
namespace {

Recipe recipe_of(std::initializer_list<const char*> ids) {
  Recipe r;
  for (const char* id : ids) r.steps.push_back({id, find_strategy(id)->default_knobs()});
  return r;
}

// ---- Implementer --------------------------------------------------------------------------

class Implementer : public ::testing::Test {
 protected:
  void SetUp() override {
    gemm_ = testing::task_at("bench/jaxbench/08_gemm");
    compiled_.task = gemm_;
    compiled_.base = testing::pipeline_of(compiled_.task);
  }
  WorkContext input(const CandidateMsg* best = nullptr, int threads = 1) {
    WorkContext in;
    in.task = &compiled_;
    in.best = best;
    in.ctx = {.machine = nullptr, .threads = threads};
    in.compile.cxx = "g++";
    return in;
  }
  Task gemm_;
  CompiledTask compiled_;
  BuiltinImplementer impl_;
};

TEST_F(Implementer, EmptyRecipeIsTheNaiveKernelWithAStableKey) {
  auto a = impl_.first(input());
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->origin, "naive");
  EXPECT_EQ(a->parent, "");
  EXPECT_EQ(a->kind, SourceKind::generated);
  ASSERT_TRUE(a->generated.has_value());
  EXPECT_TRUE(a->generated->schedule.empty());
  EXPECT_TRUE(a->generated->recipe.steps.empty());
  EXPECT_TRUE(a->generated->skipped.empty());
  EXPECT_EQ(a->threads, 1);
  auto naive = generate_kernel(gemm_, {}, {});
  ASSERT_TRUE(naive);
  EXPECT_EQ(a->source, *naive) << "the default schedule's kernel";
  EXPECT_EQ(a->key, candidate_key(a->source, input().compile));
  auto b = generate({}, input(), "naive again");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->key, a->key) << "the same recipe is the same candidate";
  EXPECT_EQ(b->source, a->source);
}

TEST_F(Implementer, ImplementAppendsThePlansStepToTheBest) {
  auto naive = generate({}, input(), "naive");
  ASSERT_TRUE(naive);
  Plan plan;
  plan.strategy = "register_block";
  plan.knobs = {{"mr", 4}, {"nr", 32}, {"lanes", 16}};
  auto c = impl_.implement(plan, input(&*naive));
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->origin, "builtin:register_block");
  EXPECT_EQ(c->parent, naive->key);
  ASSERT_EQ(c->generated->recipe.steps.size(), 1u);
  EXPECT_EQ(c->generated->recipe.steps[0].strategy, "register_block");
  EXPECT_EQ(c->generated->recipe.steps[0].knobs.at("mr"), 4);
  EXPECT_NE(c->generated->schedule.find("split C.i i.o i.i 4"), std::string::npos)
      << c->generated->schedule;
  EXPECT_NE(c->key, naive->key);

  plan.strategy = "pack_operand";
  plan.knobs = find_strategy("pack_operand")->default_knobs();
  auto d = impl_.implement(plan, input(&*c));
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->parent, c->key);
  ASSERT_EQ(d->generated->recipe.steps.size(), 2u);
  EXPECT_EQ(d->generated->recipe.steps[0].knobs.at("mr"), 4)
      << "the best's steps are kept as they are";
  EXPECT_EQ(d->generated->recipe.steps[1].strategy, "pack_operand");
  EXPECT_TRUE(d->generated->schedule.starts_with(c->generated->schedule))
      << "a recipe replays its prefix first";
  EXPECT_NE(d->generated->schedule.find("cache_read B C_acc B_pk"), std::string::npos)
      << d->generated->schedule;
}

TEST_F(Implementer, WithoutABestItStartsFromTheDefaultSchedule) {
  Plan plan;
  plan.strategy = "reorder_unit_stride";
  auto c = impl_.implement(plan, input());
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->parent, "");
  EXPECT_EQ(c->generated->schedule, "reorder C i k j\n");
}

TEST_F(Implementer, AStrategyWithNothingToDoFailsWithAMessage) {
  Plan plan;
  plan.strategy = "pack_operand";  // no register tile to pack for
  auto c = impl_.implement(plan, input());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message(), "pack_operand does not apply here: nothing to transform");
}

TEST_F(Implementer, AnIllegalStepFailsWithTheSchedulesReason) {
  // mr = 0: a split factor the schedule layer refuses.
  Plan plan;
  plan.strategy = "register_block";
  plan.knobs = {{"mr", 0}};
  auto c = impl_.implement(plan, input());
  ASSERT_FALSE(c);
  EXPECT_TRUE(
      c.error().message().starts_with("register_block does not apply here: register_block on C: "))
      << c.error().message();
}

TEST_F(Implementer, UnknownStrategyFails) {
  Plan plan;
  plan.strategy = "warp_speed";
  auto c = impl_.implement(plan, input());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().message(), "unknown strategy 'warp_speed'");
  Plan text;
  text.text = "write a tiled kernel";
  auto t = impl_.implement(text, input());
  ASSERT_FALSE(t) << "free text is for brains that write source";
  EXPECT_NE(t.error().message().find("names none"), std::string::npos) << t.error().message();
}

TEST_F(Implementer, WithoutATeSpecItSaysSo) {
  CompiledTask bare;
  bare.task = gemm_;
  bare.task.te_spec.clear();
  WorkContext in = input();
  in.task = &bare;
  auto c = impl_.first(in);
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("has none"), std::string::npos) << c.error().message();
}

TEST_F(Implementer, WrittenBestIsExtendedFromTheDefaultSchedule) {
  // A best the built-in brain did not generate (a mixed team) has no recipe: the plan's step is
  // applied to the default schedule.
  CandidateMsg written;
  written.key = "w";
  written.kind = SourceKind::written;
  written.source = "// by hand\n";
  Plan plan;
  plan.strategy = "register_block";
  auto c = impl_.implement(plan, input(&written));
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_EQ(c->generated->recipe.steps.size(), 1u);
  EXPECT_EQ(c->parent, "w");
}

TEST_F(Implementer, ThreadCountKnobSetsTheCandidatesThreads) {
  Recipe r;
  EXPECT_EQ(generate(r, input(nullptr, 4), "x")->threads, 4) << "as requested";
  r.steps.push_back({"thread_count", {{"threads", 2}}});
  EXPECT_EQ(generate(r, input(nullptr, 4), "x")->threads, 2);
  r.steps[0].knobs["threads"] = 8;
  EXPECT_EQ(generate(r, input(nullptr, 4), "x")->threads, 4) << "never more than requested";
  r.steps[0].knobs["threads"] = 0;
  EXPECT_EQ(generate(r, input(nullptr, 4), "x")->threads, 4) << "0: as requested";
}

TEST_F(Implementer, PipelineOfReplaysARecipe) {
  auto p = pipeline_of(*compiled_.base, recipe_of({"register_block", "pack_operand"}), {});
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_GE(p->find("C_acc"), 0);
  EXPECT_GE(p->find("B_pk"), 0);
  auto bad = pipeline_of(*compiled_.base, recipe_of({"im2col_gemm"}), {});
  EXPECT_FALSE(bad) << "a strategy with no mechanical form";
}

// A rewrite of the program (online_softmax) goes ahead of the loop scheduling, which replays on
// the rewritten stages; a step left with nothing to do there (13's rfactor of the row max and of
// the normalizer sum, both gone) is dropped.
TEST(ImplementerRewrite, GoesAheadOfTheLoopSchedulingAndDropsStepsLeftIdle) {
  CompiledTask task;
  task.task = testing::task_at("bench/jaxbench/13_cross_entropy");
  task.base = testing::pipeline_of(task.task);
  BuiltinImplementer impl;
  WorkContext in;
  in.task = &task;
  in.ctx = {.machine = nullptr, .threads = 1};
  in.compile.cxx = "g++";
  auto best = generate(recipe_of({"register_block", "rfactor_reduction"}), in, "best");
  ASSERT_TRUE(best) << best.error().message();
  in.best = &*best;
  Plan plan;
  plan.strategy = "online_softmax";
  auto c = impl.implement(plan, in);
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_EQ(c->generated->recipe.steps.size(), 2u) << c->generated->recipe.to_string();
  EXPECT_EQ(c->generated->recipe.steps[0].strategy, "online_softmax");
  EXPECT_EQ(c->generated->recipe.steps[1].strategy, "register_block");
  EXPECT_TRUE(c->generated->schedule.starts_with("online_softmax m\nvectorize_reductions m\n"))
      << c->generated->schedule;
  EXPECT_NE(c->generated->schedule.find("cache_write lg lg_acc"), std::string::npos)
      << c->generated->schedule;
  EXPECT_EQ(c->generated->schedule.find("loss_r"), std::string::npos) << "the normalizer is gone";
  EXPECT_EQ(testing::judge(task.task, c->source), "ok");
}

// ---- Debugger -----------------------------------------------------------------------------

CandidateMsg generated_candidate() {
  CandidateMsg c;
  c.key = "k";
  c.source = "// generated\n";
  c.kind = SourceKind::generated;
  c.generated = Generation{
      .schedule = "reorder C i k j\n", .recipe = recipe_of({"reorder_unit_stride"}), .skipped = {}};
  return c;
}

// The debugger's view of the task it repairs for: rmsnorm, where a row reduction's steps apply.
const WorkContext& rmsnorm_work() {
  static const CompiledTask task = [] {
    CompiledTask t;
    t.task = testing::task_at("bench/jaxbench/12_rmsnorm");
    t.base = testing::pipeline_of(t.task);
    return t;
  }();
  static const WorkContext in{.task = &task, .best = nullptr, .ctx = {}, .compile = {}};
  return in;
}

TEST(BuiltinDebugger, CompileErrorInGeneratedCodeIsAKforgeBug) {
  RunResult r;
  r.verdict = Verdict::compile_error;
  r.message = "does not compile";
  r.diagnostics = {"cand.cpp:3:5: error: expected ';'"};
  r.compile.diagnostics = {{"cand.cpp", 3, 5, "error", "expected ';' before '}' token"},
                           {"cand.cpp", 1, 1, "warning", "unused parameter"}};
  DebugOutcome d = BuiltinDebugger().debug(generated_candidate(), r, 1, rmsnorm_work());
  EXPECT_EQ(d.diagnostics.phase, "compile");
  EXPECT_TRUE(d.diagnostics.kforge_bug);
  EXPECT_EQ(d.diagnostics.message, "does not compile");
  EXPECT_EQ(d.diagnostics.details, (std::vector<std::string>{"cand.cpp:3:5: error: expected ';'",
                                                             "3:5: expected ';' before '}' token"}))
      << "errors only, not warnings";
  EXPECT_FALSE(d.repaired.has_value());
}

TEST(BuiltinDebugger, WrongAnswerListsTheFailingChecks) {
  RunResult r;
  r.verdict = Verdict::wrong_answer;
  r.checks = {{.shape = "M=1 N=1 K=1", .passed = true},
              {.shape = "M=17 N=33 K=7", .passed = false, .detail = "rel_l2 0.3 > 1e-5"}};
  DebugOutcome d = BuiltinDebugger().debug(generated_candidate(), r, 1, rmsnorm_work());
  EXPECT_EQ(d.diagnostics.phase, "test");
  EXPECT_TRUE(d.diagnostics.kforge_bug);
  EXPECT_EQ(d.diagnostics.details, std::vector<std::string>{"M=17 N=33 K=7: rel_l2 0.3 > 1e-5"});
}

TEST(BuiltinDebugger, OkIsPhaseNone) {
  RunResult r;
  r.verdict = Verdict::ok;
  DebugOutcome d = BuiltinDebugger().debug(generated_candidate(), r, 1, rmsnorm_work());
  EXPECT_EQ(d.diagnostics.phase, "none");
  EXPECT_FALSE(d.diagnostics.kforge_bug);
  EXPECT_FALSE(d.repaired.has_value());
}

TEST(BuiltinDebugger, HandWrittenCodeThatFailsIsNotAKforgeBug) {
  CandidateMsg c;
  c.source = "int main() { return }\n";
  RunResult r;
  r.verdict = Verdict::compile_error;
  DebugOutcome d = BuiltinDebugger().debug(c, r, 1, rmsnorm_work());
  EXPECT_EQ(d.diagnostics.phase, "compile");
  EXPECT_FALSE(d.diagnostics.kforge_bug);
}

TEST(BuiltinDebugger, TimeoutWithTunedKnobsRetriesWithDefaults) {
  CandidateMsg c = generated_candidate();
  c.origin = "builtin:unroll_inner";
  c.generated->recipe = recipe_of({"vectorize_inner", "unroll_inner"});
  c.generated->recipe.steps[1].knobs["unroll"] = 8;
  RunResult r;
  r.verdict = Verdict::timeout;
  r.message = "ran past 2 s";
  DebugOutcome d = BuiltinDebugger().debug(c, r, 1, rmsnorm_work());
  EXPECT_EQ(d.diagnostics.phase, "run");
  EXPECT_FALSE(d.diagnostics.kforge_bug) << "slow is not wrong";
  ASSERT_TRUE(d.repaired.has_value());
  EXPECT_EQ(d.repaired->kind, SourceKind::generated);
  EXPECT_EQ(d.repaired->origin, "debugger:unroll_inner");
  const Recipe& fixed = d.repaired->generated->recipe;
  ASSERT_EQ(fixed.steps.size(), 2u);
  EXPECT_EQ(fixed.steps[0].knobs, c.generated->recipe.steps[0].knobs);
  EXPECT_EQ(fixed.steps[1].knobs, find_strategy("unroll_inner")->default_knobs());
  EXPECT_EQ(d.repaired->source.find("// generated"), std::string::npos) << "generated anew";
  // Only once, and only when the knobs were not the defaults already.
  EXPECT_FALSE(BuiltinDebugger().debug(c, r, 2, rmsnorm_work()).repaired.has_value());
  CandidateMsg defaults = c;
  defaults.generated->recipe = fixed;
  EXPECT_FALSE(BuiltinDebugger().debug(defaults, r, 1, rmsnorm_work()).repaired.has_value());
}

TEST(BuiltinDebugger, CrashOfGeneratedCodeIsAKforgeBugButNotRepaired) {
  RunResult r;
  r.verdict = Verdict::crash;
  r.message = "SIGSEGV";
  DebugOutcome d = BuiltinDebugger().debug(generated_candidate(), r, 1, rmsnorm_work());
  EXPECT_EQ(d.diagnostics.phase, "run");
  EXPECT_TRUE(d.diagnostics.kforge_bug);
  EXPECT_FALSE(d.repaired.has_value());
  for (Verdict v : {Verdict::memory_limit, Verdict::forbidden, Verdict::suspicious}) {
    r.verdict = v;
    d = BuiltinDebugger().debug(generated_candidate(), r, 1, rmsnorm_work());
    EXPECT_EQ(d.diagnostics.phase, "run") << verdict_name(v);
    EXPECT_FALSE(d.diagnostics.kforge_bug) << verdict_name(v);
  }
}

// ---- Tester -------------------------------------------------------------------------------

RunResult timed(Verdict v, double median, int passed, int failed) {
  RunResult r;
  r.verdict = v;
  r.message = std::string(verdict_name(v));
  for (int i = 0; i < passed; ++i) r.checks.push_back({.shape = "ok", .passed = true});
  for (int i = 0; i < failed; ++i) r.checks.push_back({.shape = "bad", .passed = false});
  if (median > 0) {
    Timing t;
    t.median_s = median;
    t.min_s = median * 0.8;
    r.timing = t;
  }
  return r;
}

TEST(BuiltinTester, SpeedupAgainstTheBestAndChecksCounted) {
  const RunResult best = timed(Verdict::ok, 2e-3, 5, 0);
  TestReport t = BuiltinTester().report(timed(Verdict::ok, 5e-4, 9, 0), &best);
  EXPECT_EQ(t.verdict, Verdict::ok);
  EXPECT_EQ(t.checks_passed, 9);
  EXPECT_EQ(t.checks_total, 9);
  EXPECT_DOUBLE_EQ(t.median_s, 5e-4);
  EXPECT_DOUBLE_EQ(t.min_s, 4e-4);
  EXPECT_DOUBLE_EQ(t.speedup_vs_best, 4.0);
  EXPECT_FALSE(t.reused);

  t = BuiltinTester().report(timed(Verdict::ok, 4e-3, 3, 0), &best);
  EXPECT_DOUBLE_EQ(t.speedup_vs_best, 0.5) << "slower than the best";
}

TEST(BuiltinTester, NoSpeedupWhenNotOkOrNoBest) {
  const RunResult best = timed(Verdict::ok, 2e-3, 5, 0);
  TestReport t = BuiltinTester().report(timed(Verdict::wrong_answer, 1e-3, 7, 2), &best);
  EXPECT_EQ(t.verdict, Verdict::wrong_answer);
  EXPECT_EQ(t.checks_passed, 7);
  EXPECT_EQ(t.checks_total, 9);
  EXPECT_EQ(t.speedup_vs_best, 0);
  t = BuiltinTester().report(timed(Verdict::ok, 1e-3, 3, 0), nullptr);
  EXPECT_EQ(t.speedup_vs_best, 0);
  t = BuiltinTester().report(timed(Verdict::compile_error, 0, 0, 0), &best);
  EXPECT_EQ(t.checks_total, 0);
  EXPECT_EQ(t.median_s, 0);
  nlohmann::json j = t.to_json();
  EXPECT_EQ(j["verdict"], "compile_error");
  EXPECT_EQ(j["speedup_vs_best"], 0.0);
}

// ---- Autotuner ----------------------------------------------------------------------------

// A fake measurement: time is a separable function of register_block's knobs with its optimum
// at mr=8, nr=48, lanes=8 (every other value at least 10% slower per knob).
struct FakeMeasure {
  std::map<std::string, double> cost_mr = {{"4", 1.3}, {"6", 1.2}, {"8", 1.0}, {"12", 1.25}};
  std::map<std::string, double> cost_nr = {{"16", 1.5}, {"32", 1.2}, {"48", 1.0}, {"64", 1.1}};
  std::map<std::string, double> cost_lanes = {{"8", 1.0}, {"16", 1.1}};
  std::vector<std::string> measured;  // recipes, in call order
  std::vector<std::string> origins;

  double time_of(const Recipe& r) const {
    const Knobs& k = r.steps.at(0).knobs;
    return cost_mr.at(std::to_string(k.at("mr"))) * cost_nr.at(std::to_string(k.at("nr"))) *
           cost_lanes.at(std::to_string(k.at("lanes")));
  }
  RecipeMeasureFn fn() {
    return [this](const Recipe& r, const std::string& origin) -> std::optional<double> {
      measured.push_back(r.to_string());
      origins.push_back(origin);
      return time_of(r);
    };
  }
};

TEST(BuiltinAutotuner, FindsTheKnownOptimumWithinBudget) {
  FakeMeasure m;
  const Recipe start = recipe_of({"register_block"});  // mr=6 nr=32 lanes=16
  Recipe best = tune_recipe(start, m.time_of(start), m.fn(), 20, TuneScope::newest_step, {});
  EXPECT_EQ(best.to_string(), "register_block(lanes=8,mr=8,nr=48)");
  EXPECT_DOUBLE_EQ(m.time_of(best), 1.0);
  EXPECT_LE(m.measured.size(), 20u);
  // One sweep finds it (5 variants), a second confirms nothing improves.
  EXPECT_GE(m.measured.size(), 5u);
  ASSERT_FALSE(m.origins.empty());
  EXPECT_EQ(m.origins[0], "autotune:register_block.mr=4");
}

TEST(BuiltinAutotuner, AWiderTileGivesUpRowsToFitTheRegisterFile) {
  // 8 x 64 would need 32 accumulators alone: the trial nr = 64 runs as 6 x 64 (24 accumulators,
  // 4 operand vectors, 1 broadcast: 29 of AVX-512's 32 registers), the tile that wins here.
  Recipe start = recipe_of({"register_block_epilogue"});
  start.steps[0].knobs = {{"mr", 8}, {"nr", 32}, {"lanes", 16}};
  std::vector<std::string> origins, measured;
  RecipeMeasureFn fn = [&](const Recipe& r, const std::string& origin) -> std::optional<double> {
    origins.push_back(origin);
    measured.push_back(r.to_string());
    const Knobs& k = r.steps[0].knobs;
    return k.at("mr") == 6 && k.at("nr") == 64 ? 1.0 : 2.0;
  };
  Recipe best = tune_recipe(start, 2.0, fn, 20, TuneScope::newest_step, {});
  EXPECT_EQ(best.to_string(), "register_block_epilogue(lanes=16,mr=6,nr=64)");
  EXPECT_NE(
      std::find(origins.begin(), origins.end(), "autotune:register_block_epilogue.nr=64,mr=6"),
      origins.end());
  for (const std::string& r : measured)
    EXPECT_EQ(r.find("mr=8,nr=64"), std::string::npos) << "never measured: " << r;
  // 8 x 48 fits (24 accumulators + 3 + 1) and is tried as asked.
  EXPECT_NE(std::find(origins.begin(), origins.end(), "autotune:register_block_epilogue.nr=48"),
            origins.end());
}

TEST(BuiltinAutotuner, OnAnAvx2TargetTilesFitSixteenRegisters) {
  // AVX2: a 16-lane vector of the schedule is two of the 16 ymm registers. From 4 x 16 (8
  // accumulators, 2 operand registers, 1 broadcast), no measured tile needs more than 16.
  Recipe start = recipe_of({"register_block"});
  start.steps[0].knobs = {{"mr", 4}, {"nr", 16}, {"lanes", 16}};
  std::vector<std::string> measured;
  RecipeMeasureFn fn = [&](const Recipe& r, const std::string&) -> std::optional<double> {
    measured.push_back(r.to_string());
    const Knobs& k = r.steps[0].knobs;
    const int64_t regs = k.at("nr") / 8;
    EXPECT_LE(k.at("mr") * regs + regs + 1, 16) << r.to_string();
    return 2.0 - 0.01 * static_cast<double>(k.at("mr") * k.at("nr"));  // bigger tiles are faster
  };
  MachineInfo m;
  m.isa = {"avx2", "fma"};
  const Target avx2 = target_for(m);
  Recipe best = tune_recipe(start, 2.0, fn, 20, TuneScope::newest_step, {&m, 1, &avx2});
  EXPECT_FALSE(measured.empty());
  const Knobs& k = best.steps[0].knobs;
  EXPECT_LE(k.at("mr") * (k.at("nr") / 8) + k.at("nr") / 8 + 1, 16) << best.to_string();
  // The same search for AVX-512 reaches tiles AVX2 cannot hold.
  measured.clear();
  MachineInfo wide;
  wide.isa = {"avx2", "fma", "avx512f"};
  const Target avx512 = target_for(wide);
  fn = [&](const Recipe& r, const std::string&) -> std::optional<double> {
    measured.push_back(r.to_string());
    const Knobs& kk = r.steps[0].knobs;
    return 2.0 - 0.01 * static_cast<double>(kk.at("mr") * kk.at("nr"));
  };
  Recipe wider = tune_recipe(start, 2.0, fn, 20, TuneScope::newest_step, {&wide, 1, &avx512});
  const Knobs& w = wider.steps[0].knobs;
  EXPECT_GT(w.at("mr") * (w.at("nr") / 8) + w.at("nr") / 8 + 1, 16) << wider.to_string();
}

TEST(BuiltinAutotuner, ANarrowerTileTakesTheRowsItFrees) {
  // From 6 x 64 (24 accumulators) the trial nr = 32 runs as 12 x 32 (24 accumulators, 2 operand
  // vectors, 1 broadcast), not 6 x 32 with half the register file idle; nr = 48 as 8 x 48.
  Recipe start = recipe_of({"register_block"});
  start.steps[0].knobs = {{"mr", 6}, {"nr", 64}, {"lanes", 16}};
  std::vector<std::string> origins, measured;
  RecipeMeasureFn fn = [&](const Recipe& r, const std::string& origin) -> std::optional<double> {
    origins.push_back(origin);
    measured.push_back(r.to_string());
    const Knobs& k = r.steps[0].knobs;
    return k.at("mr") == 12 && k.at("nr") == 32 ? 1.0 : 2.0;  // (6 x 32 only as an mr trial)
  };
  Recipe best = tune_recipe(start, 2.0, fn, 20, TuneScope::newest_step, {});
  EXPECT_EQ(best.to_string(), "register_block(lanes=16,mr=12,nr=32)");
  auto tried = [&](const std::string& o) {
    return std::find(origins.begin(), origins.end(), o) != origins.end();
  };
  EXPECT_TRUE(tried("autotune:register_block.nr=32,mr=12"));
  EXPECT_TRUE(tried("autotune:register_block.nr=48,mr=8"));
  EXPECT_FALSE(tried("autotune:register_block.nr=32")) << "the narrower tile as 6 x 32";
  for (const std::string& r : measured)
    EXPECT_EQ(r.find("mr=12,nr=64"), std::string::npos) << "never measured: " << r;
}

TEST(BuiltinAutotuner, NeverExceedsTheBudget) {
  const Recipe start = recipe_of({"register_block"});
  for (int budget = 0; budget <= 12; ++budget) {
    FakeMeasure m;
    Recipe best = tune_recipe(start, m.time_of(start), m.fn(), budget, TuneScope::newest_step, {});
    EXPECT_LE(m.measured.size(), static_cast<size_t>(budget)) << "budget " << budget;
    EXPECT_LE(m.time_of(best), m.time_of(start)) << "never worse than the start";
    if (budget == 0) {
      EXPECT_EQ(best.to_string(), start.to_string());
    }
  }
}

TEST(BuiltinAutotuner, NeverMeasuresARecipeTwiceNorTheStart) {
  FakeMeasure m;
  const Recipe start = recipe_of({"register_block"});
  tune_recipe(start, m.time_of(start), m.fn(), 100, TuneScope::newest_step, {});
  std::set<std::string> unique(m.measured.begin(), m.measured.end());
  EXPECT_EQ(unique.size(), m.measured.size()) << "a recipe measured twice wastes the budget";
  EXPECT_EQ(unique.count(start.to_string()), 0u) << "the start was measured already";
  // 4 x 4 x 2 grid minus the start: coordinate descent visits at most that many.
  EXPECT_LE(m.measured.size(), 31u);
}

TEST(BuiltinAutotuner, KeepsChangesWithinTheNoiseMarginOut) {
  FakeMeasure m;
  m.cost_mr = {{"4", 1.0}, {"6", 1.0}, {"8", 0.99}, {"12", 1.0}};  // 1% is noise
  m.cost_nr = {{"16", 1.0}, {"32", 1.0}, {"48", 1.0}, {"64", 1.0}};
  m.cost_lanes = {{"8", 1.0}, {"16", 1.0}};
  const Recipe start = recipe_of({"register_block"});
  Recipe best = tune_recipe(start, m.time_of(start), m.fn(), 20, TuneScope::newest_step, {});
  EXPECT_EQ(best.to_string(), start.to_string());
}

TEST(BuiltinAutotuner, FailedVariantsAreSkipped) {
  FakeMeasure m;
  const Recipe start = recipe_of({"register_block"});
  int calls = 0;
  RecipeMeasureFn fn = [&](const Recipe& r, const std::string&) -> std::optional<double> {
    ++calls;
    if (r.steps[0].knobs.at("mr") == 8) return std::nullopt;  // e.g. does not compile
    return m.time_of(r);
  };
  Recipe best = tune_recipe(start, m.time_of(start), fn, 20, TuneScope::newest_step, {});
  EXPECT_EQ(best.steps[0].knobs.at("mr"), 6) << "mr=8 failed; 4 is slower than 6";
  EXPECT_EQ(best.steps[0].knobs.at("nr"), 48);
  EXPECT_EQ(best.steps[0].knobs.at("lanes"), 8);
  EXPECT_LE(calls, 20);
}

// Every step's knobs, the newest step's first (the earlier ones were tuned when accepted, and
// are swept again because the newest step's knobs moved).
TEST(BuiltinAutotuner, TunesEveryStepsKnobsNewestFirst) {
  Recipe start = recipe_of({"rfactor_reduction", "unroll_inner"});  // lanes 16, unroll 4
  std::vector<std::string> origins;
  RecipeMeasureFn fn = [&](const Recipe& r, const std::string& origin) -> std::optional<double> {
    origins.push_back(origin);
    const double lanes = r.steps[0].knobs.at("lanes") == 8 ? 1.0 : 2.0;
    const double unroll = r.steps[1].knobs.at("unroll") == 2 ? 1.0 : 2.0;
    return lanes * unroll;
  };
  Recipe best = tune_recipe(start, 4.0, fn, 10, TuneScope::newest_step, {});
  EXPECT_EQ(best.to_string(), "rfactor_reduction(lanes=8) + unroll_inner(unroll=2)");
  ASSERT_GE(origins.size(), 3u);
  EXPECT_EQ(origins[0], "autotune:unroll_inner.unroll=2");
  EXPECT_EQ(origins[1], "autotune:unroll_inner.unroll=8");
  EXPECT_EQ(origins[2], "autotune:rfactor_reduction.lanes=8");
}

// Times for rfactor_reduction + unroll_inner where only the first step's lanes=8 pays off;
// records the origin of every measurement.
RecipeMeasureFn only_rfactor_lanes_pay_off(std::vector<std::string>& origins) {
  return [&origins](const Recipe& r, const std::string& origin) -> std::optional<double> {
    origins.push_back(origin);
    return r.steps[0].knobs.at("lanes") == 8 ? 1.0 : 2.0;
  };
}

TEST(BuiltinAutotuner, EarlierStepsAreLeftAloneWhenTheNewestNeedsNoTuning) {
  // rfactor_reduction's lanes would pay off, but the newest step (unroll_inner) keeps its value:
  // the balance between the steps did not change, so the earlier step is not swept again.
  Recipe start = recipe_of({"rfactor_reduction", "unroll_inner"});
  std::vector<std::string> origins;
  RecipeMeasureFn fn = only_rfactor_lanes_pay_off(origins);
  Recipe best = tune_recipe(start, 2.0, fn, 10, TuneScope::newest_step, {});
  EXPECT_EQ(best.to_string(), start.to_string());
  EXPECT_EQ(origins, (std::vector<std::string>{"autotune:unroll_inner.unroll=2",
                                               "autotune:unroll_inner.unroll=8"}));
}

TEST(BuiltinAutotuner, TheWholeRecipeIsSweptOnceWhenAsked) {
  // The same recipe and times, swept as a whole (the planner has run out of strategies): every
  // step's knobs, the first step first, each once, and the earlier step's better value is kept.
  Recipe start = recipe_of({"rfactor_reduction", "unroll_inner"});
  std::vector<std::string> origins;
  RecipeMeasureFn fn = only_rfactor_lanes_pay_off(origins);
  Recipe best = tune_recipe(start, 2.0, fn, 10, TuneScope::whole_recipe, {});
  EXPECT_EQ(best.steps[0].knobs.at("lanes"), 8);
  EXPECT_EQ(best.steps[1].knobs.at("unroll"), 4);
  EXPECT_EQ(origins, (std::vector<std::string>{"autotune:rfactor_reduction.lanes=8",
                                               "autotune:unroll_inner.unroll=2",
                                               "autotune:unroll_inner.unroll=8"}));
  // Within its budget.
  origins.clear();
  tune_recipe(start, 2.0, fn, 2, TuneScope::whole_recipe, {});
  EXPECT_EQ(origins.size(), 2u);
}

TEST(BuiltinAutotuner, RecipesWithoutKnobsAreLeftAlone) {
  int calls = 0;
  RecipeMeasureFn fn = [&](const Recipe&, const std::string&) -> std::optional<double> {
    ++calls;
    return 1.0;
  };
  Recipe start = recipe_of({"inline_elementwise", "parallel_outer"});
  Recipe best = tune_recipe(start, 1.0, fn, 10, TuneScope::newest_step, {});
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(best.to_string(), start.to_string());
}

}  // namespace
}  // namespace kf::agents::builtin
