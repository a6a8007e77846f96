// The built-in autotuner's search in isolation (agents/builtin/roles.cpp, tune_recipe): it
// measures with a fake RecipeMeasureFn whose time is a known function of the knobs.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "agents/builtin/brain.h"
#include "builtin_test_util.h"

namespace kf::agents::builtin {
namespace {

using builtin_test::recipe_of;

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

TEST(BuiltinAutotuner, AStepWithoutKnobsLeavesTheTileBeforeItToTune) {
  // 14's register tile, then the specialization of its loop (no knobs): the tile's knobs are
  // the newest there are to tune.
  FakeMeasure m;
  const Recipe start = recipe_of({"register_block", "uniform_gather_tile"});
  Recipe best = tune_recipe(start, m.time_of(start), m.fn(), 20, TuneScope::newest_step, {});
  EXPECT_EQ(best.to_string(), "register_block(lanes=8,mr=8,nr=48) + uniform_gather_tile()");
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
