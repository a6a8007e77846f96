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
  c.kind = SourceKind::generated;
  c.generated =
      Generation{.schedule = "reorder C i k j\n", .recipe = {}, .skipped = {"x on y: no"}};
  c.generated->recipe.steps.push_back({"reorder_unit_stride", {}});
  c.parent = "p";
  c.origin = "builtin:reorder_unit_stride";
  c.threads = 2;
  nlohmann::json j = c.to_json();
  EXPECT_FALSE(j.contains("source"));
  EXPECT_EQ(j["key"], "abc");
  EXPECT_EQ(j["kind"], "generated");
  EXPECT_EQ(j["generated"]["schedule"], c.generated->schedule);
  EXPECT_EQ(j["generated"]["recipe"], c.generated->recipe.to_json());
  EXPECT_EQ(j["generated"]["skipped"][0], "x on y: no");
  EXPECT_EQ(j["parent"], "p");
  EXPECT_EQ(j["origin"], c.origin);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(c.to_json(true)["source"], c.source);
  auto back = Recipe::from_json(j["generated"]["recipe"]);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->to_string(), c.generated->recipe.to_string());
  EXPECT_EQ(c.describe(), "reorder_unit_stride()");
}

// Written source carries no generation: nothing in its message pretends it has a schedule.
TEST(Messages, WrittenCandidateHasNoGeneration) {
  CandidateMsg c;
  c.key = "w";
  c.source = "void f() {}\n";
  c.kind = SourceKind::written;
  c.origin = "files:tiled.cpp";
  nlohmann::json j = c.to_json();
  EXPECT_EQ(j["kind"], "written");
  EXPECT_FALSE(j.contains("generated"));
  EXPECT_EQ(c.describe(), "files:tiled.cpp");
  for (SourceKind k :
       {SourceKind::generated, SourceKind::written, SourceKind::edited, SourceKind::imported})
    EXPECT_EQ(parse_source_kind(source_kind_name(k)), k);
  EXPECT_FALSE(parse_source_kind("handmade").has_value());
}

TEST(Messages, FreeTextPlanIsNamedByItsText) {
  Plan p;
  p.text = "tile the rows by 64 and keep w in L1";
  EXPECT_EQ(p.id(), p.text);
  EXPECT_EQ(p.to_json()["text"], p.text);
  p.strategy = "tile_2d";
  EXPECT_EQ(p.id(), "tile_2d");
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
