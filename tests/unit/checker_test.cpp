#include "harness/checker.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kforge/kernel.h"

namespace kf {
namespace {

const Tolerance kTol{.rel_l2 = 1e-5, .atol = 1e-5, .rtol = 1e-4};

TEST(Checker, ExactMatchPasses) {
  std::vector<float> got = {1, 2, 3, 4};
  std::vector<double> want = {1, 2, 3, 4};
  auto r = compare_output("C", got.data(), DType::f32, want.data(), {2, 2}, kTol);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_EQ(r.rel_l2, 0);
}

TEST(Checker, NaNNeverPasses) {
  std::vector<float> got = {1, 2, std::numeric_limits<float>::quiet_NaN(), 4};
  std::vector<double> want = {1, 2, 3, 4};
  auto r = compare_output("C", got.data(), DType::f32, want.data(), {2, 2}, kTol);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("C[1, 0]: got nan, expected 3"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("NaN"), std::string::npos);
}

TEST(Checker, InfNeverPasses) {
  std::vector<float> got = {1, std::numeric_limits<float>::infinity()};
  std::vector<double> want = {1, 2};
  EXPECT_FALSE(compare_output("y", got.data(), DType::f32, want.data(), {2}, kTol).passed);
}

TEST(Checker, ElementwiseBoundNamesFirstBadIndex) {
  std::vector<float> got(60, 1.0f);
  std::vector<double> want(60, 1.0);
  got[37] = 1.01f;  // 1e-2 > 1e-5 + 1e-4
  auto r = compare_output("Y", got.data(), DType::f32, want.data(), {3, 4, 5}, kTol);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("Y[1, 3, 2]"), std::string::npos) << r.detail;
  EXPECT_NEAR(r.max_abs_err, 0.01, 1e-6);
}

TEST(Checker, WorstRatioIsTheWorstElementsShareOfItsBound) {
  // Bounds: 1e-5 + 1e-4 * |y*|. Element 0 uses 0.5 of its bound (1.1e-4 at y* = 1), element 1
  // 0.8 (8.8e-6 of 1.1e-5 at y* = 0.01); the ratio names the larger share, not the larger error.
  const Tolerance tol{.rel_l2 = 1e-3, .atol = 1e-5, .rtol = 1e-4};  // only elementwise binds
  std::vector<double> want = {1.0, 0.01, -3.0};
  std::vector<float> got = {static_cast<float>(1.0 + 0.5 * 1.1e-4),
                            static_cast<float>(0.01 + 0.8 * 1.1e-5), -3.0f};
  auto r = compare_output("y", got.data(), DType::f32, want.data(), {3}, tol);
  EXPECT_TRUE(r.passed) << r.detail;
  EXPECT_NEAR(r.worst_ratio, 0.8, 0.01);
  EXPECT_NE(r.worst.find("y[1]"), std::string::npos) << r.worst;
  EXPECT_NEAR(r.max_abs_err, 0.5 * 1.1e-4, 1e-6);
  // Over the bound: the ratio says by how much.
  got[2] = static_cast<float>(-3.0 + 2 * (1e-5 + 3e-4));
  auto bad = compare_output("y", got.data(), DType::f32, want.data(), {3}, tol);
  EXPECT_FALSE(bad.passed);
  EXPECT_NEAR(bad.worst_ratio, 2.0, 0.01);
}

TEST(Checker, RelativeL2Bound) {
  // Every element within the elementwise bound but a systematic bias over the L2 bound.
  std::vector<double> want(1000, 1.0);
  std::vector<float> got(1000, static_cast<float>(1.0 + 5e-5));
  Tolerance tol{.rel_l2 = 1e-5, .atol = 0, .rtol = 1e-4};
  auto r = compare_output("Y", got.data(), DType::f32, want.data(), {1000}, tol);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("relative L2 error"), std::string::npos) << r.detail;
}

TEST(Checker, SmallErrorsPass) {
  std::vector<double> want = {1.0, -2.0, 1e-9};
  std::vector<float> got = {1.0f + 1e-7f, -2.0f, 0.0f};
  EXPECT_TRUE(compare_output("Y", got.data(), DType::f32, want.data(), {3}, kTol).passed);
}

TEST(Checker, IntegersMustMatchExactly) {
  std::vector<int32_t> got = {1, 2, 4};
  std::vector<double> want = {1, 2, 3};
  auto r = compare_output("idx", got.data(), DType::i32, want.data(), {3}, kTol);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.detail.find("idx[2]"), std::string::npos);
}

TEST(Checker, Bf16IsWidenedExactly) {
  std::vector<bf16> got = {bf16(1.5f), bf16(-0.25f)};
  std::vector<double> want = {1.5, -0.25};
  EXPECT_TRUE(compare_output("y", got.data(), DType::bf16, want.data(), {2}, kTol).passed);
}

TEST(Checker, PoisonLeavesNoValidValue) {
  std::vector<float> f(4, 1.0f);
  poison(f.data(), DType::f32, f.size());
  for (float v : f) EXPECT_TRUE(std::isnan(v));
  std::vector<int64_t> i(2, 0);
  poison(i.data(), DType::i64, i.size());
  EXPECT_EQ(i[0], std::numeric_limits<int64_t>::min());
}

TEST(Checker, PoisonCoversEveryDtype) {
  std::vector<double> d(3, 0.0);
  poison(d.data(), DType::f64, d.size());
  for (double v : d) EXPECT_TRUE(std::isnan(v));
  std::vector<bf16> b(3, bf16(1.0f));
  poison(b.data(), DType::bf16, b.size());
  for (bf16 v : b) EXPECT_TRUE(std::isnan(static_cast<float>(v)));
  std::vector<int32_t> i(3, 0);
  poison(i.data(), DType::i32, i.size());
  for (int32_t v : i) EXPECT_EQ(v, std::numeric_limits<int32_t>::min());
  std::vector<float> f(5, 1.0f);
  poison(f.data(), DType::f32, 3);
  EXPECT_TRUE(std::isnan(f[2]));
  EXPECT_EQ(f[3], 1.0f) << "only the elements asked for";
}

TEST(Checker, SampleIndicesAreDistinctAscendingAndInRange) {
  auto all = sample_indices(5, 10, 1);
  EXPECT_EQ(all, (std::vector<size_t>{0, 1, 2, 3, 4}));
  auto some = sample_indices(1000000, 4096, 7);
  EXPECT_GT(some.size(), 4000u);
  EXPECT_TRUE(std::is_sorted(some.begin(), some.end()));
  EXPECT_EQ(std::adjacent_find(some.begin(), some.end()), some.end());
  EXPECT_LT(some.back(), 1000000u);
  EXPECT_NE(sample_indices(1000000, 4096, 8), some) << "another seed, other elements";
}

TEST(Checker, ACheckOfASampleFindsAWrongOrUnwrittenElement) {
  std::vector<double> want(10000);
  for (size_t i = 0; i < want.size(); ++i) want[i] = 0.5 * static_cast<double>(i);
  std::vector<float> got(want.begin(), want.end());
  const OracleSample s = take_sample(want.data(), sample_indices(want.size(), 10000, 3));
  EXPECT_EQ(check_sample("y", got.data(), DType::f32, s, {100, 100}, kTol, 1, 64), "");
  got[4242] += 1.0f;
  // All of a sample no larger than `count` is checked; a bigger one, `count` of it at a time.
  EXPECT_NE(check_sample("y", got.data(), DType::f32, s, {100, 100}, kTol, 1, 1 << 20)
                .find("y[42, 42]: got 2122, expected 2121"),
            std::string::npos);
  got[4242] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(check_sample("y", got.data(), DType::f32, s, {100, 100}, kTol, 1, 1 << 20), "");
  // Elements outside the sample are not looked at.
  const OracleSample few = take_sample(want.data(), {0, 1, 2});
  EXPECT_EQ(check_sample("y", got.data(), DType::f32, few, {100, 100}, kTol, 1, 8), "");
}

TEST(Checker, ElementNames) {
  EXPECT_EQ(element_name("A", 0, {}), "A[]");
  EXPECT_EQ(element_name("A", 7, {2, 4}), "A[1, 3]");
}

}  // namespace
}  // namespace kf
