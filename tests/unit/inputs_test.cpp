#include "task/inputs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace kf {
namespace {

Task ragged_task() {
  auto t = parse_task(R"(name = "r"
category = "moe"
dtype = "f32"
[signature]
function = "f"
dims = ["M", "G", "N"]
inputs = [
  { name = "x", dtype = "f32", shape = ["M"], dist = { kind = "normal", mean = 2.0, std = 0.5 } },
  { name = "sizes", dtype = "i32", shape = ["G"], dist = { kind = "partition", total = "M" } },
  { name = "offs", dtype = "i64", shape = ["G + 1"], dist = { kind = "offsets", total = "M" } },
  { name = "ids", dtype = "i32", shape = ["M"], dist = { kind = "randint", lo = 2, hi = "N", sorted = true } },
  { name = "s", dtype = "f32", shape = ["M"], dist = { kind = "positive", lo = 0.5, hi = 0.75 } },
]
outputs = [ { name = "y", dtype = "f32", shape = ["M"] } ]
[shapes]
bench = { M = 1000, G = 8, N = 50 }
tests = [ { M = 1, G = 1, N = 3 }, { M = 17, G = 5, N = 7 } ]
[tolerance]
f32 = { rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }
[cost]
flops = "M"
)",
                      "r/task.toml");
  EXPECT_TRUE(t) << t.error().message();
  return *t;
}

TEST(Inputs, DeterministicPerSeed) {
  Task t = ragged_task();
  auto s = *t.instantiate(t.bench);
  std::vector<float> a(1000), b(1000), c(1000);
  ASSERT_TRUE(generate_input(t, s, 0, 42, a.data()).ok());
  ASSERT_TRUE(generate_input(t, s, 0, 42, b.data()).ok());
  ASSERT_TRUE(generate_input(t, s, 0, 43, c.data()).ok());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double mean = std::accumulate(a.begin(), a.end(), 0.0) / 1000;
  EXPECT_NEAR(mean, 2.0, 0.1);
}

TEST(Inputs, PartitionSumsToTotalWithAnEmptyGroup) {
  Task t = ragged_task();
  auto s = *t.instantiate(t.bench);
  std::vector<int32_t> sizes(8);
  ASSERT_TRUE(generate_input(t, s, 1, 7, sizes.data()).ok());
  EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), 0), 1000);
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), 0), sizes.end());
  for (int v : sizes) EXPECT_GE(v, 0);
}

TEST(Inputs, OffsetsAreMonotoneFromZeroToTotal) {
  Task t = ragged_task();
  auto s = *t.instantiate(t.bench);
  std::vector<int64_t> offs(9);
  ASSERT_TRUE(generate_input(t, s, 2, 7, offs.data()).ok());
  EXPECT_EQ(offs.front(), 0);
  EXPECT_EQ(offs.back(), 1000);
  EXPECT_TRUE(std::is_sorted(offs.begin(), offs.end()));
}

TEST(Inputs, RandintInRangeAndSorted) {
  Task t = ragged_task();
  auto s = *t.instantiate(t.bench);
  std::vector<int32_t> ids(1000);
  ASSERT_TRUE(generate_input(t, s, 3, 9, ids.data()).ok());
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_GE(ids.front(), 2);
  EXPECT_LT(ids.back(), 50);
}

TEST(Inputs, PositiveRange) {
  Task t = ragged_task();
  auto s = *t.instantiate(t.bench);
  std::vector<float> v(1000);
  ASSERT_TRUE(generate_input(t, s, 4, 1, v.data()).ok());
  EXPECT_GE(*std::min_element(v.begin(), v.end()), 0.5f);
  EXPECT_LT(*std::max_element(v.begin(), v.end()), 0.75f);
}

TEST(Inputs, RandintWithEmptyRangeFails) {
  Task t = ragged_task();
  auto s = *t.instantiate({{"M", 4}, {"G", 2}, {"N", 2}});  // ids in [2, 2)
  std::vector<int32_t> ids(4);
  Status st = generate_input(t, s, 3, 1, ids.data());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("randint needs hi > lo"), std::string::npos);
}

TEST(Inputs, PartitionTotalIsBounded) {
  Task t = ragged_task();
  // M is the partition's total: a shape may say 2^40 while the tensors stay small when the
  // total names a dim no tensor is sized by; here `sizes` has G elements only.
  auto s = t.instantiate({{"M", 1}, {"G", 2}, {"N", 3}});
  ASSERT_TRUE(s);
  s->env["M"] = 1099511627776.0;  // 2^40 units would take hours to draw one by one
  std::vector<int32_t> sizes(2);
  Status st = generate_input(t, *s, 1, 1, sizes.data());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "input 'sizes': total 1099511627776 is beyond 2^31 (each unit is drawn)");
}

}  // namespace
}  // namespace kf
