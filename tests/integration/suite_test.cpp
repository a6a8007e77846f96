// The bundled suite at test shapes: every task loads and validates, its reference at the task's
// dtype passes the judge against the f64 oracle, its TE spec (where it has one) agrees with the
// reference at double on every test shape, and its library baseline passes the judge.
// One test per task, so a broken task is named by its test.
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/evaluator.h"
#include "harness/te_oracle.h"
#include "support/fs.h"
#include "support/test_env.h"

namespace kf {
namespace {

std::vector<std::string> suite_tasks() {
  std::vector<std::string> names;
  for (const auto& e :
       std::filesystem::directory_iterator(testing::source_dir() / "bench/jaxbench"))
    if (e.is_directory()) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

class Suite : public ::testing::TestWithParam<std::string> {};

TEST_P(Suite, TaskReferenceTeAndBaselineAgree) {
  auto task = load_task(testing::source_dir() / "bench/jaxbench" / GetParam());
  ASSERT_TRUE(task) << task.error().message();
  EvalOptions o;
  o.time = false;
  // Fixed inputs, so a failure here can be reproduced: with fresh seeds, 32's f32 reference once
  // missed rel_l2 1e-5 (1.17e-5 at B=9 I=5 H=3 O=2) in a CI run and passed on every rerun. The
  // judge itself still draws fresh inputs for every candidate.
  o.seed = 20261205;
  auto ref = evaluate(*task, task->reference_source, o);
  ASSERT_TRUE(ref) << ref.error().message();
  EXPECT_EQ(ref->verdict, Verdict::ok) << "the reference at the task's dtype: " << ref->message;
  if (!task->te_spec.empty()) {
    auto rows = cross_check_te(*task, 1, 0);
    ASSERT_TRUE(rows) << rows.error().message();
    for (const auto& r : *rows) EXPECT_TRUE(r.passed) << r.shape << ": " << r.detail;
  }
  if (task->baseline) {
    auto src = read_file(task->dir / task->baseline->file);
    ASSERT_TRUE(src) << src.error().message();
    EvalOptions b = o;
    b.compile.libs = task->baseline->libs;
    auto bl = evaluate(*task, *src, b);
    ASSERT_TRUE(bl) << bl.error().message();
    EXPECT_EQ(bl->verdict, Verdict::ok) << "the baseline: " << bl->message;
  }
}

std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

INSTANTIATE_TEST_SUITE_P(JaxBench, Suite, ::testing::ValuesIn(suite_tasks()), name_of);

}  // namespace
}  // namespace kf
