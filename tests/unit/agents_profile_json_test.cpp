#include <gtest/gtest.h>

#include "agents/profiler.h"

namespace kf::agents {
namespace {

Profile sample() {
  Profile p;
  p.task = "08_gemm";
  p.shape = "M=1024 N=1024 K=1024";
  p.verdict = "ok";
  p.threads = 2;
  p.roofline = {.known = true,
                .bound = "compute",
                .gflops = 60,
                .peak_gflops = 420,
                .fraction = 0.14,
                .intensity = 170,
                .headroom = 7};
  p.working_set = {.bytes = 12 << 20,
                   .bytes_per_thread = 6 << 20,
                   .level = "L3",
                   .fits_l3 = true,
                   .dram_pass_s = 1.7e-4};
  p.vectorization.available = true;
  p.vectorization.hot_loops = 2;
  p.vectorization.missed = 1;
  p.vectorization.vectorized_lines = {16};
  p.vectorization.missed_loops = {{41, "for (k...)", "not vectorized: complicated", 42}};
  p.vectorization.narrow_loops = {{11, "for (k...)", "8-byte vectors", 11}};
  p.instructions.available = true;
  p.instructions.symbols = {"gemm(float const*)"};
  p.instructions.innermost_loops = 1;
  p.instructions.all = {.total = 100, .fma_zmm = 8, .loads = 20};
  p.instructions.loops = {.total = 20, .fma_zmm = 8, .gathers = 1};
  p.thread_use = {.known = true, .requested = 2, .cpus_busy = 1.01, .faults_per_call = 3};
  p.stage_times = {.known = true, .calls = 4, .stages = {{"C", 0.012, 0.75}, {"Bp", 0.004, 0.25}}};
  p.tags = {.compute_bound = true,
            .not_vectorized = true,
            .serial_when_parallel_requested = true,
            .faults_in_hot_path = true,
            .fits_l3 = true};
  p.findings = {"compute-bound at 14% of the FMA peak", "threads: 1 of 2 CPUs busy"};
  return p;
}

TEST(ProfileJson, RoundTrips) {
  const Profile p = sample();
  const nlohmann::json j = p.to_json();
  auto back = Profile::from_json(j);
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->to_json(), j);
  EXPECT_EQ(back->vectorization.missed_loops[0].reason_line, 42);
  EXPECT_EQ(back->vectorization.narrow_loops[0].reason, "8-byte vectors");
  EXPECT_EQ(back->instructions.loops.gathers, 1);
  EXPECT_TRUE(back->tags.serial_when_parallel_requested);
  EXPECT_EQ(j["tags"]["not_vectorized"], true);
  EXPECT_EQ(j["findings"][1], "threads: 1 of 2 CPUs busy");
  ASSERT_EQ(back->stage_times.stages.size(), 2u);
  EXPECT_EQ(back->stage_times.stages[1].stage, "Bp");
  EXPECT_EQ(j["stage_times"]["stages"][0]["share"], 0.75);
}

TEST(ProfileJson, AProfileStoredBeforeStageTimesStillReads) {
  nlohmann::json j = sample().to_json();
  j.erase("stage_times");
  auto p = Profile::from_json(j);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_FALSE(p->stage_times.known);
  EXPECT_TRUE(p->stage_times.stages.empty());

  j = sample().to_json();
  j["stage_times"]["stages"][1].erase("seconds");
  p = Profile::from_json(j);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message(), "profile: missing field 'stage_times.stages[1].seconds'");
}

TEST(ProfileJson, ErrorsNameTheField) {
  nlohmann::json j = sample().to_json();
  j["working_set"].erase("level");
  auto p = Profile::from_json(j);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message(), "profile: missing field 'working_set.level'");

  j = sample().to_json();
  j["instructions"]["loops"]["fma_zmm"] = "eight";
  p = Profile::from_json(j);
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message().find("'instructions.loops.fma_zmm' has the wrong type"),
            std::string::npos)
      << p.error().message();

  j = sample().to_json();
  j["vectorization"]["missed_loops"][0].erase("source");
  p = Profile::from_json(j);
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().message(), "profile: missing field 'vectorization.missed_loops[0].source'");

  EXPECT_FALSE(Profile::from_json(nlohmann::json::array()).has_value());
}

}  // namespace
}  // namespace kf::agents
