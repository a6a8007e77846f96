// The registry of brains and the planner's evidence from a judged result (agents/registry.cpp).
#include <gtest/gtest.h>

#include <filesystem>

#include "agents/llm/session.h"
#include "agents/roles.h"
#include "llm/replay_server.h"

namespace kf::agents {
namespace {

TEST(BrainRegistry, EveryBrainHasEveryRole) {
  EXPECT_EQ(brain_names(), (std::vector<std::string>{"builtin", "files", "llm"}));
  const std::filesystem::path sources = ::testing::TempDir() + "/registry_sources";
  std::filesystem::create_directories(sources);
  // The LLM brain probes its endpoint when it is made: a replay server that lists the model.
  auto server = llm::ReplayServer::start({.models = {"coder"}});
  ASSERT_TRUE(server) << server.error().message();
  llm::LlmConfig config;
  config.defaults.base_url = (*server)->base_url();
  config.defaults.model = "coder";
  auto session = std::make_shared<llm_brain::Session>(llm_brain::SessionOptions{.config = config});
  for (const std::string& name : brain_names()) {
    auto b = make_brain(name, {.sources = sources, .llm = session});
    ASSERT_TRUE(b) << b.error().message();
    EXPECT_EQ(b->name, name);
    EXPECT_NE(b->planner, nullptr);
    EXPECT_NE(b->implementer, nullptr);
    EXPECT_NE(b->debugger, nullptr);
    EXPECT_NE(b->tester, nullptr);
    EXPECT_NE(b->profiler, nullptr);
    EXPECT_NE(b->autotuner, nullptr);
  }
}

TEST(BrainRegistry, ATeamNamesABrainPerRole) {
  auto all = parse_team("builtin");
  ASSERT_TRUE(all) << all.error().message();
  EXPECT_EQ(all->size(), role_names().size());
  for (const auto& [role, brain] : *all) EXPECT_EQ(brain, "builtin") << role;
  EXPECT_EQ(team_name(*all), "builtin");

  auto some = parse_team("planner=builtin,autotuner=builtin");
  ASSERT_TRUE(some) << some.error().message();
  EXPECT_EQ(some->size(), role_names().size()) << "the roles not named get the default";
  EXPECT_EQ(some->at("implementer"), "builtin");

  auto b = make_brain("planner=builtin,default=builtin");
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->name, "builtin");
  EXPECT_EQ(b->roles.at("debugger"), "builtin");
  EXPECT_NE(b->autotuner, nullptr);

  // A mixed team is named by its roles.
  EXPECT_EQ(team_name({{"planner", "llm"}, {"implementer", "builtin"}}),
            "planner=llm,implementer=builtin");
}

TEST(BrainRegistry, ABadTeamSaysWhatIsWrong) {
  auto message = [](const std::string& spec) {
    auto t = parse_team(spec);
    EXPECT_FALSE(t) << spec;
    return t ? std::string() : t.error().message();
  };
  EXPECT_NE(message("planner=gpt").find("unknown brain 'gpt'"), std::string::npos);
  EXPECT_NE(message("critic=builtin")
                .find("roles are planner, implementer, debugger, tester, profiler, autotuner"),
            std::string::npos);
  EXPECT_NE(message("planner=builtin,planner=builtin").find("given twice"), std::string::npos);
  EXPECT_NE(message("planner=builtin,builtin").find("not ROLE=BRAIN"), std::string::npos);
  EXPECT_NE(message("planner=").find("unknown brain ''"), std::string::npos);
  EXPECT_LT(message(std::string(100000, 'x') + "=builtin").size(), 300u)
      << "a long role is quoted shortly";
}

TEST(BrainRegistry, WhatNeedsATeSpecIsSaidPerRole) {
  const std::filesystem::path sources = ::testing::TempDir() + "/registry_sources";
  std::filesystem::create_directories(sources);
  auto builtin = make_brain("builtin");
  ASSERT_TRUE(builtin);
  EXPECT_EQ(roles_needing_te_spec(*builtin),
            (std::vector<std::string>{"planner (builtin)", "implementer (builtin)"}));
  auto files = make_brain("files", {.sources = sources});
  ASSERT_TRUE(files) << files.error().message();
  EXPECT_TRUE(roles_needing_te_spec(*files).empty());
  auto mixed = make_brain("planner=builtin,implementer=files", {.sources = sources});
  ASSERT_TRUE(mixed) << mixed.error().message();
  EXPECT_EQ(mixed->name,
            "planner=builtin,implementer=files,debugger=builtin,tester=builtin,"
            "profiler=builtin,autotuner=builtin");
  EXPECT_EQ(roles_needing_te_spec(*mixed), std::vector<std::string>{"planner (builtin)"});
}

TEST(BrainRegistry, ABrainsOptionsAreChecked) {
  auto none = make_brain("files");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("--sources"), std::string::npos) << none.error().message();
  auto missing = make_brain("implementer=files", {.sources = "/no/such/folder"});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("not a folder"), std::string::npos)
      << missing.error().message();
  EXPECT_NE(brain_summaries().find("files"), std::string::npos);
}

TEST(BrainRegistry, UnknownBrainNamesTheKnownOnes) {
  auto b = make_brain("gpt");
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("unknown brain 'gpt'"), std::string::npos)
      << b.error().message();
  EXPECT_NE(b.error().message().find("builtin"), std::string::npos) << b.error().message();
}

TEST(EvidenceFromResult, RooflineAndCounters) {
  RunResult r;
  Roofline f;
  f.bound = "memory";
  f.fraction = 0.25;
  f.gflops = 3;
  f.gbps = 5;
  r.roofline = f;
  r.counters = Counters{.cpus_busy = 1.5, .minor_faults_per_call = 100};
  Evidence e = evidence_from_result(r, 4);
  EXPECT_EQ(e.bound, "memory");
  EXPECT_DOUBLE_EQ(e.fraction, 0.25);
  EXPECT_DOUBLE_EQ(e.headroom, 4.0);
  EXPECT_DOUBLE_EQ(e.gflops, 3);
  EXPECT_DOUBLE_EQ(e.gbps, 5);
  EXPECT_DOUBLE_EQ(e.cpus_busy, 1.5);
  EXPECT_EQ(e.threads, 4);
  EXPECT_TRUE(e.faults_in_hot_path);
  EXPECT_FALSE(e.not_vectorized) << "the profiler's to say";

  r.counters->minor_faults_per_call = 16;
  EXPECT_FALSE(evidence_from_result(r, 1).faults_in_hot_path);
}

TEST(EvidenceFromResult, NothingMeasured) {
  Evidence e = evidence_from_result(RunResult{}, 2);
  EXPECT_EQ(e.bound, "");
  EXPECT_DOUBLE_EQ(e.headroom, 1.0);
  EXPECT_DOUBLE_EQ(e.fraction, 0);
  EXPECT_DOUBLE_EQ(e.cpus_busy, 0);
  EXPECT_EQ(e.threads, 2);

  RunResult zero;
  zero.roofline = Roofline{};
  EXPECT_DOUBLE_EQ(evidence_from_result(zero, 1).headroom, 1.0) << "no division by zero";
}

TEST(EvidenceJson, HasEveryField) {
  Evidence e;
  e.bound = "compute";
  e.fraction = 0.5;
  e.findings = {"a finding"};
  nlohmann::json j = e.to_json();
  for (const char* k : {"bound", "fraction", "headroom", "gflops", "gbps", "cpus_busy", "threads",
                        "not_vectorized", "faults_in_hot_path", "findings"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["bound"], "compute");
  EXPECT_EQ(j["findings"][0], "a finding");
}

}  // namespace
}  // namespace kf::agents
