// The typed messages the roles exchange (agents/messages.h): their JSON is what the store keeps
// and what an LLM brain will read, so every field must be there under its documented name.
#include <gtest/gtest.h>

#include "agents/messages.h"

namespace kf::agents {
namespace {

TEST(Messages, PlanJson) {
  Plan p;
  p.strategy = "register_block";
  p.knobs = {{"mr", 6}, {"nr", 32}};
  p.analysis = "1 stage";
  p.bottleneck = "compute-bound at 5%";
  p.why = "a GEMM";
  p.expected_speedup = 8;
  p.alternatives = {"rfactor_reduction (~4.0x)"};
  nlohmann::json j = p.to_json();
  EXPECT_EQ(j["strategy"], "register_block");
  EXPECT_EQ(j["knobs"], (nlohmann::json{{"mr", 6}, {"nr", 32}}));
  EXPECT_EQ(j["analysis"], "1 stage");
  EXPECT_EQ(j["bottleneck"], "compute-bound at 5%");
  EXPECT_EQ(j["why"], "a GEMM");
  EXPECT_EQ(j["expected_speedup"], 8.0);
  EXPECT_EQ(j["alternatives"], nlohmann::json::array({"rfactor_reduction (~4.0x)"}));
  EXPECT_TRUE(Plan{}.to_json()["knobs"].is_object()) << "no knobs is {}, not null";
}

TEST(Messages, CandidateJsonLeavesTheSourceOutUnlessAsked) {
  CandidateMsg c;
  c.key = "abc";
  c.source = "void f() {}\n";
  c.schedule = "reorder C i k j\n";
  c.recipe.steps.push_back({"reorder_unit_stride", {}});
  c.parent = "p";
  c.origin = "builtin:reorder_unit_stride";
  c.threads = 2;
  c.skipped = {"x on y: no"};
  nlohmann::json j = c.to_json();
  EXPECT_FALSE(j.contains("source"));
  EXPECT_EQ(j["key"], "abc");
  EXPECT_EQ(j["schedule"], c.schedule);
  EXPECT_EQ(j["recipe"], c.recipe.to_json());
  EXPECT_EQ(j["parent"], "p");
  EXPECT_EQ(j["origin"], c.origin);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["skipped"][0], "x on y: no");
  EXPECT_EQ(c.to_json(true)["source"], c.source);
  auto back = Recipe::from_json(j["recipe"]);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to_string(), c.recipe.to_string());
}

TEST(Messages, DiagnosticsAndTestReportJson) {
  Diagnostics d{.phase = "compile", .message = "m", .details = {"3:5: e"}, .kforge_bug = true};
  nlohmann::json j = d.to_json();
  EXPECT_EQ(j["phase"], "compile");
  EXPECT_EQ(j["message"], "m");
  EXPECT_EQ(j["details"][0], "3:5: e");
  EXPECT_EQ(j["kforge_bug"], true);

  TestReport t;
  t.verdict = Verdict::wrong_answer;
  t.checks_passed = 3;
  t.checks_total = 4;
  t.median_s = 1e-3;
  t.speedup_vs_best = 0;
  t.reused = true;
  j = t.to_json();
  EXPECT_EQ(j["verdict"], "wrong_answer");
  EXPECT_EQ(j["checks_passed"], 3);
  EXPECT_EQ(j["checks_total"], 4);
  EXPECT_EQ(j["median_s"], 1e-3);
  EXPECT_EQ(j["reused"], true);
  EXPECT_TRUE(j.contains("min_s"));
  EXPECT_TRUE(j.contains("speedup_vs_best"));
  EXPECT_TRUE(j.contains("message"));
}

}  // namespace
}  // namespace kf::agents
