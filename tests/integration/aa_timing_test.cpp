// A/A timing: a kernel timed side by side with a byte-identical copy of itself (the copy as the
// rival) must measure 1.00x within 5%, whichever file is the candidate, for a compute-bound and a
// memory-bound kernel; a deliberately slower copy must fail the same check. The judge once gave
// the candidate's position a 10-25% loss on memory-bound kernels (its buffers were allocated
// first, from the free memory's small fragments): this is the test that it no longer does.
//
// The statistic is built for a shared, noisy 2-core machine without being unable to fail. Each
// evaluation gives the geometric mean of its min and median ratios (the min is robust to
// disturbances that slow single calls, the median to lucky ones). Each order (the first file as
// the candidate, then as the rival) is the median of eight evaluations, and the two orders are
// combined into the two effects the judge must not show: the file's (the geometric mean of the
// orders: how much faster one file measures, whatever its position) and the position's (half
// their log ratio: how much the candidate's place gains it, whichever file holds it). Both must be
// within the band. A single order is not checked alone: on a memory-bound kernel the CI machine's
// evaluations of identical files spread 0.87-1.13, so one order's median moved 8% from 1 while
// the other sat at 1.000. The negative control, a copy doing twice the memory traffic, must fail
// the file check by a wide margin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "harness/evaluator.h"
#include "support/test_env.h"

namespace kf {
namespace {

constexpr double kBand = 0.05;
constexpr int kEvaluations = 8;  // per order; the median is taken

// Vectorizable i-k-j GEMM: compute-bound at 256^3 (every operand stays in L2).
const char* kGemm = R"(#include <cstdint>
void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
)";

const char* kStream = R"(#include <cstdint>
void stream(const float* a, const float* b, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i) y[i] = 2.0f * a[i] + b[i];
}
)";

// The same result with twice the memory traffic: the whole pass, done twice. (Splitting it
// into 2a, then + b, was 1.03-1.25x slower depending on the machine: its three arrays fit in a
// 32 MiB L3, where the extra pass costs little.)
const char* kStreamSlower = R"(#include <cstdint>
void stream(const float* a, const float* b, float* y, int64_t N) {
  for (int64_t i = 0; i < N; ++i) y[i] = 2.0f * a[i] + b[i];
  asm volatile("" ::: "memory");
  for (int64_t i = 0; i < N; ++i) y[i] = 2.0f * a[i] + b[i];
}
)";

Task load(const char* dir) {
  auto task = load_task(testing::source_dir() / dir);
  KF_CHECK(task) << task.error().message();
  return *task;
}

// One evaluation of `candidate` beside `rival`: the geometric mean of vs_rival's min and median.
double side_by_side(const Task& task, const std::string& candidate, const std::string& rival) {
  EvalOptions o;
  o.threads = 1;
  o.time_reference = false;
  o.rival_source = rival;
  o.min_time_s = 0.3;
  o.min_samples = 20;
  o.seeds_per_shape = 2;
  o.bench_oracle_budget_s =
      0.5;  // a few input bases are enough here: this test times, it does not hunt cheats
  auto r = evaluate(task, candidate, o);
  KF_CHECK(r) << r.error().message();
  EXPECT_EQ(r->verdict, Verdict::ok) << r->message;
  EXPECT_GT(r->vs_rival.min, 0);
  return std::sqrt(r->vs_rival.min * r->vs_rival.median);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : std::sqrt(v[n / 2 - 1] * v[n / 2]);
}

// The ratio of `b`'s time over `a`'s (>1: a is faster) in each order, `a` as the candidate beside
// `b` and then `b` as the candidate beside `a`, each the median of kEvaluations evaluations; and
// the two effects combined from them.
struct Orders {
  double a_first = 0, b_first = 0;
  // How much faster `a` measures than `b` in either position (1: the files time alike).
  double file() const { return std::sqrt(a_first * b_first); }
  // How much faster a file measures as the candidate than as the rival (1: no position effect).
  double position() const { return std::sqrt(a_first / b_first); }
};
Orders aa_ratio(const Task& task, const std::string& a, const std::string& b) {
  std::vector<double> ab, ba;
  for (int i = 0; i < kEvaluations; ++i) {
    ab.push_back(side_by_side(task, a, b));
    ba.push_back(1 / side_by_side(task, b, a));
  }
  const Orders o{median(ab), median(ba)};
  const auto [ab_lo, ab_hi] = std::minmax_element(ab.begin(), ab.end());
  const auto [ba_lo, ba_hi] = std::minmax_element(ba.begin(), ba.end());
  std::printf(
      "%s: %.3f (%.3f-%.3f) with the first as candidate, %.3f (%.3f-%.3f) as rival; "
      "file %.3f, position %.3f\n",
      task.name.c_str(), o.a_first, *ab_lo, *ab_hi, o.b_first, *ba_lo, *ba_hi, o.file(),
      o.position());
  return o;
}

TEST(AATiming, ComputeBoundKernelAgainstACopyOfItself) {
  const Task task = load("tests/adversarial/task");
  const Orders r = aa_ratio(task, kGemm, kGemm);
  EXPECT_NEAR(r.file(), 1.0, kBand) << "a GEMM beside a byte-identical copy";
  EXPECT_NEAR(r.position(), 1.0, kBand) << "a GEMM's gain from the candidate's place";
}

TEST(AATiming, MemoryBoundKernelAgainstACopyOfItself) {
  const Task task = load("tests/integration/aa_stream");
  const Orders r = aa_ratio(task, kStream, kStream);
  EXPECT_NEAR(r.file(), 1.0, kBand) << "a streaming kernel beside a byte-identical copy";
  EXPECT_NEAR(r.position(), 1.0, kBand) << "a streaming kernel's gain from the candidate's place";
}

TEST(AATiming, ASlowerCopyFailsTheSameCheck) {
  const Task task = load("tests/integration/aa_stream");
  const Orders r = aa_ratio(task, kStream, kStreamSlower);
  EXPECT_GT(std::abs(r.file() - 1.0), kBand) << "the check must be able to fail";
  for (double x : {r.file(), r.a_first, r.b_first})
    EXPECT_GT(x, 1.15) << "twice the memory traffic: the copy is the slower one, in either place";
}

}  // namespace
}  // namespace kf
