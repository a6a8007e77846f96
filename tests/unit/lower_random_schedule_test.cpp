// Differential property test: for every TE task, randomly drawn legal schedules lower to kernels
// that pass the judge on every test shape; random moves that are illegal are refused with a
// message and leave the pipeline unchanged. A few schedules per task run here; set
// KFORGE_NIGHTLY=1 for a nightly-style run (KFORGE_RANDOM_SCHEDULES=N to choose the count).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <vector>

#include "lower_test_util.h"
#include "schedule/random_schedule.h"

namespace kf {
namespace {

// Schedules per task: `ci` in CI, 200 in a nightly run, or KFORGE_RANDOM_SCHEDULES.
int schedules_per_task(int ci = 4) {
  if (const char* n = std::getenv("KFORGE_RANDOM_SCHEDULES")) return std::atoi(n);
  const char* nightly = std::getenv("KFORGE_NIGHTLY");
  return nightly && std::string(nightly) == "1" ? 200 : ci;
}

uint64_t task_seed(const std::string& name) {
  uint64_t h = 1469598103934665603ULL;
  for (char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

class RandomSchedules : public ::testing::TestWithParam<std::string> {};

void judge_random_schedules(const std::string& dir, int n) {
  Task task = testing::task_at(dir);
  sched::Pipeline p = testing::pipeline_of(task);
  for (int i = 0; i < n; ++i) {
    const uint64_t seed = task_seed(task.name) + static_cast<uint64_t>(i);
    sched::Schedule s = sched::random_schedule(p, seed, {});
    // The trace replays exactly from its text.
    sched::Pipeline replay = p;
    ASSERT_TRUE(sched::apply_schedule(replay, testing::schedule_of(s.to_string())).ok())
        << s.to_string();
    EXPECT_EQ(testing::lower_and_judge(task, s.to_string(), seed), "ok") << "seed " << seed << ":\n"
                                                                         << s.to_string();
  }
}

TEST_P(RandomSchedules, LegalSchedulesPassTheJudge) {
  judge_random_schedules(GetParam(), schedules_per_task());
}

TEST_P(RandomSchedules, IllegalMovesAreRefusedAndChangeNothing) {
  Task task = testing::task_at(GetParam());
  sched::Pipeline p = testing::pipeline_of(task);
  sched::Rng rng(task_seed(task.name));
  int refused = 0, applied = 0;
  for (int i = 0; i < 300; ++i) {
    sched::Primitive m = sched::random_move(p, rng);
    sched::Pipeline before = p;
    Status s = sched::apply_primitive(p, m);
    if (s.ok()) {
      ++applied;
      if (applied % 10 == 0) p = testing::pipeline_of(task);  // keep schedules short
      continue;
    }
    ++refused;
    EXPECT_FALSE(s.message().empty()) << m.to_string();
    EXPECT_EQ(p.to_string(), before.to_string()) << m.to_string();
  }
  EXPECT_GT(refused, 0);
  EXPECT_GT(applied, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Tasks, RandomSchedules,
    ::testing::Values("bench/jaxbench/08_gemm", "bench/jaxbench/09_swiglu_mlp",
                      "bench/jaxbench/12_rmsnorm", "bench/jaxbench/18_conv2d_relu_biasadd",
                      "bench/jaxbench/50_matmul_gelu_softmax", "tests/golden/tasks/scan",
                      "tests/golden/tasks/argmax_rows", "tests/golden/tasks/gather_pad",
                      "tests/golden/tasks/bf16_softmax", "tests/golden/tasks/f64_layernorm",
                      "tests/golden/tasks/convt1d_s3", "bench/outside/gemm_nt_staged"),
    [](const auto& info) {
      std::string n = std::filesystem::path(info.param).filename().string();
      return n.substr(n.find_first_not_of("0123456789_"));
    });

// Every other TE task of the suite: one random legal schedule each in CI (the nightly run
// draws 200 per task).
class SuiteRandomSchedules : public ::testing::TestWithParam<std::string> {};

TEST_P(SuiteRandomSchedules, LegalSchedulesPassTheJudge) {
  judge_random_schedules(GetParam(), schedules_per_task(1));
}

std::vector<std::string> other_suite_tasks() {
  const std::set<std::string> main = {"08_gemm", "09_swiglu_mlp", "12_rmsnorm",
                                      "18_conv2d_relu_biasadd", "50_matmul_gelu_softmax"};
  std::vector<std::string> out;
  for (const std::string& path : testing::suite_task_paths())
    if (!main.count(std::filesystem::path(path).filename().string())) out.push_back(path);
  return out;
}

INSTANTIATE_TEST_SUITE_P(JaxBench, SuiteRandomSchedules, ::testing::ValuesIn(other_suite_tasks()),
                         [](const auto& info) {
                           std::string n = std::filesystem::path(info.param).filename().string();
                           return "t" + n.substr(0, 2);
                         });

}  // namespace
}  // namespace kf
