// The strategy catalog and recipes (agents/strategy.h): the catalog is complete and consistent,
// recipes round-trip through JSON, and a recipe replays on a task's default pipeline into a
// schedule that applies and lowers, skipping (with the reason) the move groups that are illegal.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "agents/strategy.h"
#include "lower_test_util.h"

namespace kf::agents {
namespace {

using testing::task_at;

// ---- The catalog ------------------------------------------------------------------------

TEST(StrategyCatalog, HasThirtyOrMoreStrategiesWithUniqueSnakeCaseIds) {
  const auto& cat = strategy_catalog();
  EXPECT_GE(cat.size(), 30u);
  std::set<std::string> ids;
  const std::regex snake("[a-z][a-z0-9]*(_[a-z0-9]+)*");
  for (const Strategy& s : cat) {
    EXPECT_TRUE(ids.insert(s.id).second) << "duplicate id " << s.id;
    EXPECT_TRUE(std::regex_match(s.id, snake)) << s.id;
    EXPECT_NE(s.id, "stop") << "\"stop\" is the planner's end-of-loop plan";
  }
  EXPECT_EQ(&cat, &strategy_catalog()) << "one catalog, built once";
}

TEST(StrategyCatalog, EveryStrategyIsDescribedForPeopleAndLlms) {
  for (const Strategy& s : strategy_catalog()) {
    EXPECT_FALSE(s.name.empty()) << s.id;
    EXPECT_GT(s.description.size(), 20u) << s.id;
    EXPECT_GT(s.evidence.size(), 10u) << s.id;
    for (const Knob& k : s.knobs) EXPECT_FALSE(k.meaning.empty()) << s.id << "." << k.name;
  }
}

TEST(StrategyCatalog, EveryKnobsValuesIncludeItsInitial) {
  for (const Strategy& s : strategy_catalog()) {
    std::set<std::string> names;
    for (const Knob& k : s.knobs) {
      EXPECT_TRUE(names.insert(k.name).second) << s.id << " has two knobs " << k.name;
      EXPECT_NE(std::find(k.values.begin(), k.values.end(), k.initial), k.values.end())
          << s.id << "." << k.name << " = " << k.initial << " is not among its values";
      EXPECT_EQ(s.default_knobs().at(k.name), k.initial) << s.id << "." << k.name;
    }
    EXPECT_EQ(s.default_knobs().size(), s.knobs.size()) << s.id;
  }
}

TEST(StrategyCatalog, MechanicalFormsAndTunedKnobs) {
  int with_moves = 0, tuned = 0, catalog_only = 0;
  for (const Strategy& s : strategy_catalog()) {
    if (s.moves) ++with_moves;
    if (!s.tuned_knob.empty()) {
      ++tuned;
      EXPECT_EQ(s.moves, nullptr) << s.id << ": tuned strategies act through knobs, not moves";
      bool found = false;
      for (const Knob& k : s.knobs) found = found || k.name == s.tuned_knob;
      EXPECT_TRUE(found) << s.id << " tunes " << s.tuned_knob << ", which is not one of its knobs";
    }
    if (!s.mechanical()) ++catalog_only;
  }
  // The counts docs/optimize.md gives.
  EXPECT_EQ(with_moves, 32);
  EXPECT_EQ(tuned, 3);
  EXPECT_EQ(catalog_only, 2);
}

TEST(StrategyCatalog, FindStrategy) {
  const Strategy* s = find_strategy("register_block");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->id, "register_block");
  EXPECT_TRUE(s->mechanical());
  EXPECT_EQ(s->default_knobs(), (Knobs{{"mr", 6}, {"nr", 32}, {"lanes", 16}}));
  const Strategy* o = find_strategy("im2col_gemm");
  ASSERT_NE(o, nullptr);
  EXPECT_FALSE(o->mechanical());
  EXPECT_EQ(find_strategy("no_such_strategy"), nullptr);
  EXPECT_EQ(find_strategy(""), nullptr);
  EXPECT_EQ(find_strategy("Register_Block"), nullptr) << "ids are exact";
  for (const Strategy& st : strategy_catalog()) EXPECT_EQ(find_strategy(st.id), &st);
}

// ---- Recipes ----------------------------------------------------------------------------

TEST(Recipe, JsonRoundTrip) {
  Recipe r;
  r.steps.push_back({"register_block", {{"mr", 4}, {"nr", 48}}});
  r.steps.push_back({"parallel_outer", {}});
  r.steps.push_back({"thread_count", {{"threads", -1}}});
  const nlohmann::json j = r.to_json();
  ASSERT_TRUE(j.is_array());
  EXPECT_EQ(j[0]["strategy"], "register_block");
  EXPECT_EQ(j[0]["knobs"]["mr"], 4);
  EXPECT_TRUE(j[1]["knobs"].is_object()) << "no knobs is an empty object";
  auto back = Recipe::from_json(nlohmann::json::parse(j.dump()));
  ASSERT_TRUE(back) << back.error().message();
  ASSERT_EQ(back->steps.size(), 3u);
  EXPECT_EQ(back->steps[0].strategy, "register_block");
  EXPECT_EQ(back->steps[0].knobs, (Knobs{{"mr", 4}, {"nr", 48}}));
  EXPECT_TRUE(back->steps[1].knobs.empty());
  EXPECT_EQ(back->steps[2].knobs.at("threads"), -1);
  EXPECT_EQ(back->to_json(), j);
  EXPECT_EQ(back->to_string(), r.to_string());

  auto empty = Recipe::from_json(nlohmann::json::array());
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->steps.empty());
  auto no_knobs = Recipe::from_json(nlohmann::json::parse(R"([{"strategy": "vectorize_inner"}])"));
  ASSERT_TRUE(no_knobs);
  EXPECT_TRUE(no_knobs->steps[0].knobs.empty());
}

TEST(Recipe, ToStringAndHas) {
  Recipe r;
  EXPECT_EQ(r.to_string(), "default schedule");
  r.steps.push_back({"register_block", {{"nr", 32}, {"mr", 6}}});
  r.steps.push_back({"parallel_outer", {}});
  EXPECT_EQ(r.to_string(), "register_block(mr=6,nr=32) + parallel_outer()");
  EXPECT_TRUE(r.has("parallel_outer"));
  EXPECT_FALSE(r.has("pack_operand"));
}

struct BadRecipe {
  const char* name;
  const char* json;
  const char* error;
};

class RecipeMalformed : public ::testing::TestWithParam<BadRecipe> {};

TEST_P(RecipeMalformed, IsAnErrorSayingWhatWasExpected) {
  auto r = Recipe::from_json(nlohmann::json::parse(GetParam().json));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Json, RecipeMalformed,
    ::testing::Values(
        BadRecipe{"object_not_array", R"({"strategy": "register_block"})",
                  "recipe: expected an array of steps"},
        BadRecipe{"step_not_object", R"(["register_block"])",
                  R"(recipe step: expected {"strategy": NAME, "knobs": {...}})"},
        BadRecipe{"no_strategy", R"([{"knobs": {}}])",
                  R"(recipe step: expected {"strategy": NAME, "knobs": {...}})"},
        BadRecipe{"strategy_not_string", R"([{"strategy": 3}])",
                  R"(recipe step: expected {"strategy": NAME, "knobs": {...}})"},
        BadRecipe{"knobs_not_object", R"([{"strategy": "register_block", "knobs": [6]}])",
                  "recipe step: knobs must be an object"},
        BadRecipe{"knob_fractional", R"([{"strategy": "register_block", "knobs": {"mr": 6.5}}])",
                  "recipe step register_block: knob mr must be an integer"},
        BadRecipe{"knob_string", R"([{"strategy": "tile_2d", "knobs": {"ti": "32"}}])",
                  "recipe step tile_2d: knob ti must be an integer"},
        BadRecipe{"second_step_bad",
                  R"([{"strategy": "register_block"}, {"strategy": "pack_operand", "knobs": 1}])",
                  "recipe step: knobs must be an object"}),
    [](const auto& info) { return std::string(info.param.name); });

// ---- Realizing recipes --------------------------------------------------------------------

Recipe recipe_of(std::initializer_list<const char*> ids) {
  Recipe r;
  for (const char* id : ids) r.steps.push_back({id, {}});
  return r;
}

TEST(RealizeRecipe, GemmRegisterBlockAndPackApplyAndLower) {
  Task task = task_at("bench/jaxbench/08_gemm");
  const sched::Pipeline base = testing::pipeline_of(task);
  auto r = realize_recipe(base, recipe_of({"register_block", "pack_operand"}), {});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->skipped.empty()) << r->skipped.front();
  EXPECT_EQ(r->applied_groups, (std::vector<int>{1, 1}));
  // The BLIS-style micro-kernel of examples/schedules/08_gemm.sched (without threads).
  EXPECT_EQ(r->schedule.to_string(),
            "cache_write C C_acc\n"
            "split C.i i.o i.i 6\n"
            "split C.j j.o j.i 32\n"
            "reorder C j.o i.o i.i j.i\n"
            "unroll C.i.i\n"
            "vectorize C.j.i 16\n"
            "compute_at C_acc C.i.o\n"
            "reorder C_acc k i j\n"
            "unroll C_acc.i\n"
            "vectorize C_acc.j 16\n"
            "cache_read B C_acc B_pk\n"
            "compute_at B_pk C.j.o\n"
            "vectorize B_pk.j 16\n");

  sched::Pipeline p = base;
  Status st = sched::apply_schedule(p, r->schedule);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_GE(p.find("C_acc"), 0);
  EXPECT_GE(p.find("B_pk"), 0);
  auto src = generate_kernel(task, r->schedule, {});
  ASSERT_TRUE(src) << src.error().message();
  EXPECT_NE(src->find("gemm"), std::string::npos);
  EXPECT_NE(src->find("kforge: schedule-hash " + r->schedule.hash()), std::string::npos);
  // Differential: the generated kernel agrees with the oracle on the task's odd test shapes.
  EXPECT_EQ(testing::judge(task, *src), "ok");
}

TEST(RealizeRecipe, KnobValuesReachTheMoves) {
  Task task = task_at("bench/jaxbench/08_gemm");
  const sched::Pipeline base = testing::pipeline_of(task);
  Recipe rec;
  rec.steps.push_back({"register_block", {{"mr", 4}, {"nr", 48}, {"lanes", 8}}});
  auto r = realize_recipe(base, rec, {});
  ASSERT_TRUE(r) << r.error().message();
  const std::string text = r->schedule.to_string();
  EXPECT_NE(text.find("split C.i i.o i.i 4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("split C.j j.o j.i 48\n"), std::string::npos) << text;
  EXPECT_NE(text.find("vectorize C_acc.j 8\n"), std::string::npos) << text;
  // A knob left out keeps its initial value.
  rec.steps[0].knobs = {{"mr", 8}};
  r = realize_recipe(base, rec, {});
  ASSERT_TRUE(r);
  EXPECT_NE(r->schedule.to_string().find("split C.j j.o j.i 32\n"), std::string::npos);
}

TEST(RealizeRecipe, EmptyRecipeIsTheDefaultSchedule) {
  Task task = task_at("bench/jaxbench/12_rmsnorm");
  auto r = realize_recipe(testing::pipeline_of(task), {}, {});
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->schedule.empty());
  EXPECT_TRUE(r->skipped.empty());
  EXPECT_TRUE(r->applied_groups.empty());
}

TEST(RealizeRecipe, UnknownStrategyIsAnError) {
  Task task = task_at("bench/jaxbench/08_gemm");
  auto r =
      realize_recipe(testing::pipeline_of(task), recipe_of({"register_block", "warp_speed"}), {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "recipe: unknown strategy 'warp_speed'");
}

TEST(RealizeRecipe, StrategyWithoutMechanicalFormIsAnError) {
  Task task = task_at("bench/jaxbench/18_conv2d_relu_biasadd");
  auto r = realize_recipe(testing::pipeline_of(task), recipe_of({"im2col_gemm"}), {});
  ASSERT_FALSE(r) << "im2col_gemm has no schedule moves: replaying it cannot change anything";
  EXPECT_NE(r.error().message().find("im2col_gemm"), std::string::npos) << r.error().message();
}

TEST(RealizeRecipe, OnlineSoftmaxRewritesTheRowMaxAndVectorizesIt) {
  Task task = task_at("tests/golden/tasks/bf16_softmax");
  auto r = realize_recipe(testing::pipeline_of(task), recipe_of({"online_softmax"}), {});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->schedule.to_string(), "online_softmax m\nvectorize_reductions m\n");
  EXPECT_EQ(r->applied_groups, std::vector<int>{1});
  // A softmax whose row max is not read as exp(x - max) by a normalizer: nothing to do.
  Task gemm = task_at("bench/jaxbench/08_gemm");
  auto none = realize_recipe(testing::pipeline_of(gemm), recipe_of({"online_softmax"}), {});
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_EQ(none->applied_groups, std::vector<int>{0});
}

TEST(RealizeRecipe, TunedStrategiesAddNoMoves) {
  Task task = task_at("bench/jaxbench/08_gemm");
  Recipe rec = recipe_of({"thread_count", "pick_vector_width"});
  auto r = realize_recipe(testing::pipeline_of(task), rec, {});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->schedule.empty());
  EXPECT_EQ(r->applied_groups, (std::vector<int>{0, 0}));
}

TEST(RealizeRecipe, IllegalGroupIsSkippedWithItsReasonOthersApply) {
  // rmsnorm with ms computed inside y's innermost loop: vectorizing y.d would put a computed
  // stage inside a vector loop (illegal); vectorizing ms itself is fine.
  Task task = task_at("bench/jaxbench/12_rmsnorm");
  sched::Pipeline base = testing::pipeline_of(task);
  ASSERT_TRUE(sched::apply_schedule(base, testing::schedule_of("compute_at ms y.d\n")).ok());
  auto r = realize_recipe(base, recipe_of({"vectorize_inner"}), {});
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_TRUE(r->skipped[0].starts_with("vectorize_inner on y: vectorize y.d 16: "))
      << r->skipped[0];
  EXPECT_EQ(r->applied_groups, (std::vector<int>{1}));
  EXPECT_EQ(r->schedule.to_string(), "vectorize ms.n 16\n");
  // The realized trace replays on the same base.
  sched::Pipeline p = base;
  EXPECT_TRUE(sched::apply_schedule(p, r->schedule).ok());
}

TEST(RealizeRecipe, AStepWithNothingToDoAppliesNoGroup) {
  Task task = task_at("bench/jaxbench/12_rmsnorm");
  auto r = realize_recipe(testing::pipeline_of(task), recipe_of({"register_block"}), {});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->applied_groups, (std::vector<int>{0}));
  EXPECT_TRUE(r->skipped.empty());
  EXPECT_TRUE(r->schedule.empty());
}

TEST(RealizeRecipe, LaterStepsSeeEarlierOnes) {
  // pack_operand on its own has no register tile to pack for; after register_block it has.
  Task task = task_at("bench/jaxbench/08_gemm");
  const sched::Pipeline base = testing::pipeline_of(task);
  auto alone = realize_recipe(base, recipe_of({"pack_operand"}), {});
  ASSERT_TRUE(alone);
  EXPECT_EQ(alone->applied_groups, (std::vector<int>{0}));
  auto twice = realize_recipe(base, recipe_of({"register_block", "register_block"}), {});
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->applied_groups, (std::vector<int>{1, 0})) << "a stage is register-blocked once";
}

}  // namespace
}  // namespace kf::agents
