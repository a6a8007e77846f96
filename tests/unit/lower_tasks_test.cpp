// The default (naive) schedule of every TE task lowers, compiles and passes the judge at every
// test shape; so do the hand-written schedules in examples/schedules/ and a few schedules per
// feature fixture (tests/golden/tasks/: recurrence, argmax, gather + mask + padding, bf16, f64).
#include <gtest/gtest.h>

#include <filesystem>

#include "lower_test_util.h"
#include "support/fs.h"

namespace kf {
namespace {

using testing::lower_and_judge;
using testing::task_at;

class DefaultSchedule : public ::testing::TestWithParam<std::string> {};

TEST_P(DefaultSchedule, PassesTheJudge) {
  Task task = task_at(GetParam());
  EXPECT_EQ(lower_and_judge(task, ""), "ok");
}

INSTANTIATE_TEST_SUITE_P(
    Tasks, DefaultSchedule,
    ::testing::Values("bench/jaxbench/08_gemm", "bench/jaxbench/09_swiglu_mlp",
                      "bench/jaxbench/12_rmsnorm", "bench/jaxbench/18_conv2d_relu_biasadd",
                      "bench/jaxbench/50_matmul_gelu_softmax", "tests/golden/tasks/scan",
                      "tests/golden/tasks/argmax_rows", "tests/golden/tasks/gather_pad",
                      "tests/golden/tasks/bf16_softmax", "tests/golden/tasks/f64_layernorm"),
    [](const auto& info) {
      std::string n = std::filesystem::path(info.param).filename().string();
      return n.substr(n.find_first_not_of("0123456789_"));
    });

// examples/schedules/NN_name.sched for bench/jaxbench/NN_name.
TEST(ExampleSchedules, PassTheJudge) {
  int count = 0;
  for (const auto& e : std::filesystem::directory_iterator(testing::source_dir() / "examples/schedules")) {
    if (e.path().extension() != ".sched") continue;
    const std::string stem = e.path().stem().string();
    const auto task_dir = testing::source_dir() / "bench/jaxbench" / stem;
    if (!std::filesystem::exists(task_dir)) continue;
    Task task = task_at("bench/jaxbench/" + stem);
    auto text = read_file(e.path());
    ASSERT_TRUE(text.has_value());
    EXPECT_EQ(lower_and_judge(task, *text), "ok") << e.path();
    ++count;
  }
  EXPECT_GE(count, 2);
}

struct FeatureCase {
  const char* name;
  const char* task;
  const char* schedule;
};

class FeatureSchedules : public ::testing::TestWithParam<FeatureCase> {};

TEST_P(FeatureSchedules, PassTheJudge) {
  Task task = task_at(std::string("tests/golden/tasks/") + GetParam().task);
  EXPECT_EQ(lower_and_judge(task, GetParam().schedule), "ok");
}

const FeatureCase kFeatureCases[] = {
    {"scan_vectorized_rows", "scan", "reorder c l b\nvectorize c.b 4\nvectorize y.l 8\n"},
    {"scan_split_in_order", "scan", "split c.l l.o l.i 4\nunroll c.l.i\nparallel c.b\n"},
    {"scan_fused", "scan", "fuse c b l bl\nvectorize y.l 4\n"},
    {"argmax_vectorized", "argmax_rows",
     "split idx_r.n n.o n.i 8\nreorder idx_r n.o d n.i\nvectorize idx_r.n.i\nparallel mx.n\n"},
    {"argmax_split_reduction", "argmax_rows", "split idx_r.d d.o d.i 3\nreorder idx_r d.i d.o\n"},
    {"argmax_at_consumer", "argmax_rows", "compute_at idx_r idx.n\n"},
    {"gather_at_stencil", "gather_pad", "compute_at g y.t\nvectorize g.d 8\nvectorize y.d 16\n"},
    {"gather_tiles", "gather_pad",
     "split y.d d.o d.i 8\ncompute_at g y.d.o\nvectorize y.d.i\nunroll y.r\n"},
    {"gather_inline", "gather_pad", "compute_inline g\nvectorize y.d 8\n"},
    {"bf16_fused_rows", "bf16_softmax",
     "compute_at y_r y.n\ncompute_at e y.n\ncompute_at m y.n\nvectorize e.d 16\nvectorize y.d\n"},
    {"bf16_rfactor", "bf16_softmax",
     "compute_inline e\nsplit y_r.d2 d.o d.i 8\nrfactor y_r.d.i y_rf\nvectorize y_rf.d.i\n"
     "reorder y_rf d.o d.i\nparallel y.n\n"},
    {"f64_row_fusion", "f64_layernorm",
     "compute_at var y.n\ncompute_at var_r var.n\ncompute_at mu y.n\ncompute_at mu_r mu.n\n"
     "vectorize y.d\n"},
};

INSTANTIATE_TEST_SUITE_P(Fixtures, FeatureSchedules, ::testing::ValuesIn(kFeatureCases),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kf
