// End to end through the CLI: `kforge eval TASK REFERENCE --json` on each bundled task judges
// the task's own reference as a candidate: verdict ok, and the same code measured side by side
// with the reference comes out even (a check of the timer's fairness, not of speed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

class EvalCli : public ::testing::TestWithParam<std::string> {};

nlohmann::json eval_json(const std::vector<std::string>& extra) {
  std::vector<std::string> argv = {std::getenv("KFORGE_BIN"), "eval"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run_process({.argv = argv, .timeout_s = 600});
  EXPECT_TRUE(r.has_value());
  if (!r) return {};
  EXPECT_FALSE(r->timed_out);
  try {
    return nlohmann::json::parse(r->out);
  } catch (const nlohmann::json::exception& e) {
    ADD_FAILURE() << "not JSON: " << r->out << "\nstderr: " << r->err;
    return {};
  }
}

TEST_P(EvalCli, ReferenceAsCandidateIsOkAndEven) {
  const auto dir = testing::source_dir() / "bench/jaxbench" / GetParam();
  auto j =
      eval_json({dir.string(), (dir / "reference.cpp").string(), "--json", "--min-time", "0.3"});
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["verdict"], "ok") << j.dump(2);
  ASSERT_TRUE(j.contains("speedup")) << j.dump(2);
  const double s = j["speedup"]["min"].get<double>();
  // Loose bounds: this catches a biased timer (e.g. one side timed on warm caches or without
  // the overhead subtracted), not noise from a shared machine.
  EXPECT_GT(s, 0.5) << "identical code timed side by side should come out even";
  EXPECT_LT(s, 2.0) << "identical code timed side by side should come out even";
  ASSERT_TRUE(j.contains("roofline"));
  EXPECT_GT(j["roofline"]["gflops"].get<double>(), 0);
  EXPECT_GT(j["roofline"]["gbps"].get<double>(), 0);
  EXPECT_GT(j["roofline"]["fraction"].get<double>(), 0);
  // Every test shape with at least two seeds, plus the bench shape before and after timing.
  int timed = 0;
  double worst_ratio = 0;
  for (const auto& c : j["checks"]) {
    EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();
    timed += c["timed"].get<bool>();
    // Passed: every element within its bound, so the worst one's share is at most 1.
    EXPECT_LE(c["worst_ratio"].get<double>(), 1.0) << c.dump();
    worst_ratio = std::max(worst_ratio, c["worst_ratio"].get<double>());
  }
  EXPECT_EQ(timed, 1);
  EXPECT_GT(worst_ratio, 0) << "an f32 reference differs from the f64 oracle somewhere";
  EXPECT_GE(j["checks"].size(), 2u * 4 + 2);
}

INSTANTIATE_TEST_SUITE_P(Suite, EvalCli,
                         ::testing::Values("08_gemm", "09_swiglu_mlp", "12_rmsnorm",
                                           "18_conv2d_relu_biasadd", "50_matmul_gelu_softmax"));

TEST(EvalCliErrors, MalformedTaskIsAnErrorNotACrash) {
  auto r = run_process(
      {.argv = {std::getenv("KFORGE_BIN"), "eval", (testing::source_dir() / "tests").string(),
                (testing::source_dir() / "tests/adversarial/cases/ok_naive.cpp").string()},
       .timeout_s = 60});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_NE(r->err.find("task.toml: cannot open"), std::string::npos) << r->err;
}

TEST(EvalCliErrors, CompileErrorIsAVerdict) {
  auto dir = testing::source_dir() / "tests/adversarial";
  auto j = eval_json({(dir / "task").string(), (dir / "cases/not_cpp.cpp").string(), "--json"});
  EXPECT_EQ(j["verdict"], "compile_error");
  EXPECT_FALSE(j["compile"]["diagnostics"].empty());
}

}  // namespace
}  // namespace kf

namespace kf {
namespace {

TEST(EvalCliToolchains, ClangWithOpenMP) {
  auto dir = testing::source_dir() / "tests/adversarial";
  auto j = eval_json({(dir / "task").string(), (dir / "cases/ok_openmp.cpp").string(), "--json",
                      "--cxx", "clang++", "--threads", "2", "--no-time"});
  EXPECT_EQ(j["verdict"], "ok") << j.dump(2);
  EXPECT_NE(j["compile"]["command"].get<std::string>().find("clang++"), std::string::npos);
}

}  // namespace
}  // namespace kf

namespace kf {
namespace {

TEST(EvalCliBaseline, LibraryBaselineLinksItsLibraryAndPasses) {
  auto dir = testing::source_dir() / "bench/jaxbench/08_gemm";
  auto j = eval_json({dir.string(), "--baseline", "--json", "--no-time"});
  EXPECT_EQ(j["verdict"], "ok") << j.dump(2);
  EXPECT_NE(j["compile"]["command"].get<std::string>().find("-ldnnl"), std::string::npos);
}

// `--vs`: another solution timed in the same batches. The naive reference against the example
// GEMM schedule (tens of times slower: the bound only checks the rival was timed at all).
TEST(EvalCliRival, AnotherSolutionIsTimedSideBySide) {
  const auto root = testing::source_dir();
  const auto dir = root / "bench/jaxbench/08_gemm";
  auto j = eval_json({dir.string(), (root / "examples/schedules/08_gemm.sched").string(), "--vs",
                      (dir / "reference.cpp").string(), "--no-reference", "--json", "--min-time",
                      "0.2"});
  EXPECT_EQ(j["verdict"], "ok") << j.dump(2);
  ASSERT_TRUE(j.contains("rival_timing") && j.contains("speedup_vs_rival")) << j.dump(2);
  EXPECT_EQ(j["rival_timing"]["samples"], j["timing"]["samples"]);
  EXPECT_GT(j["speedup_vs_rival"]["min"].get<double>(), 2.0);
  EXPECT_EQ(j["rival"], (dir / "reference.cpp").string());
}

// `--profile` on a schedule: the profiler's evidence, with the time per stage of the
// instrumented build, under "profile" beside the judged result's fields (kforge-eval/1).
TEST(EvalCliProfile, AScheduleCandidateGetsItsTimePerStage) {
  const auto root = testing::source_dir();
  auto j = eval_json({(root / "bench/jaxbench/08_gemm").string(),
                      (root / "examples/schedules/08_gemm.sched").string(), "--json", "--profile",
                      "--no-reference", "--min-time", "0.2"});
  ASSERT_TRUE(j.contains("profile")) << j.dump(2);  // beside the result's own fields
  EXPECT_EQ(j["verdict"], "ok");
  const auto& st = j["profile"]["stage_times"];
  ASSERT_TRUE(st["known"].get<bool>()) << st.dump(2);
  ASSERT_EQ(st["stages"].size(), 1u) << st.dump(2);  // B's panel and the tile are inside C's loops
  EXPECT_EQ(st["stages"][0]["stage"], "C");
  EXPECT_GT(st["stages"][0]["seconds"].get<double>(), 0);
  bool said = false;
  for (const auto& f : j["profile"]["findings"])
    said |= f.get<std::string>().rfind("time per stage (instrumented build", 0) == 0;
  EXPECT_TRUE(said) << j["profile"]["findings"].dump(2);
}

}  // namespace
}  // namespace kf
