// The built-in implementer, debugger and tester in isolation (agents/builtin/roles.cpp). Judged
// results are written by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "agents/builtin/brain.h"
#include "agents/judge.h"
#include "builtin_test_util.h"
#include "lower_test_util.h"

namespace kf::agents::builtin {
namespace {

using builtin_test::recipe_of;

// ---- Implementer --------------------------------------------------------------------------

class Implementer : public ::testing::Test {
 protected:
  void SetUp() override {
    compiled_ = testing::compiled_at("bench/jaxbench/08_gemm");
    gemm_ = compiled_.task;
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
  const CompiledTask task = testing::compiled_at("bench/jaxbench/13_cross_entropy");
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
  static const CompiledTask task = testing::compiled_at("bench/jaxbench/12_rmsnorm");
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

}  // namespace
}  // namespace kf::agents::builtin
