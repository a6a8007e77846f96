// The bench shape's input contents (harness/bench_inputs.h): what a patched variant changes, what
// it leaves alone, and that switching a slot between variants rewrites exactly the patch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <vector>

#include "harness/bench_inputs.h"

namespace kf {
namespace {

Task mixed_task() {
  auto t = parse_task(R"(name = "m"
category = "moe"
dtype = "f32"
[signature]
function = "f"
dims = ["M", "G", "N"]
inputs = [
  { name = "x", dtype = "f32", shape = ["M"], dist = { kind = "normal", std = 1.0 } },
  { name = "offs", dtype = "i64", shape = ["G + 1"], dist = { kind = "offsets", total = "M" } },
  { name = "ids", dtype = "i32", shape = ["M"], dist = { kind = "randint", lo = 0, hi = "N" } },
  { name = "one", dtype = "f32", shape = ["1"], dist = { kind = "positive" } },
]
outputs = [ { name = "y", dtype = "f32", shape = ["M"] } ]
[shapes]
bench = { M = 6400, G = 8, N = 50 }
tests = [ { M = 1, G = 1, N = 1 }, { M = 17, G = 5, N = 7 } ]
[tolerance]
f32 = { rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }
[cost]
flops = "M"
)",
                      "m/task.toml");
  KF_CHECK(t) << t.error().message();
  return *t;
}

// Host memory laid out like a worker's buffers: `slots` sets of every tensor.
struct FakeBuffers {
  FakeBuffers(const Task& task, const ShapeInstance& shape, int slots, ShimKind kind) {
    for (int s = 0; s < slots; ++s)
      for (size_t t = 0; t < task.tensor_count(); ++t)
        bytes[{s, t}].resize(shape.elements[t] * dtype_size(buffer_dtype(task, t, kind)));
    buffers = {[this](int s, size_t t) {
                 return static_cast<void*>(bytes.at({s, t}).data());
               },
               kind};
  }
  std::map<std::pair<int, size_t>, std::vector<unsigned char>> bytes;
  SlotBuffers buffers;
};

size_t differing_elements(const std::vector<unsigned char>& a, const std::vector<unsigned char>& b,
                          size_t size) {
  size_t n = 0;
  for (size_t e = 0; e < a.size() / size; ++e)
    n += std::memcmp(a.data() + e * size, b.data() + e * size, size) != 0;
  return n;
}

TEST(BenchInputs, APatchChangesAFewElementsOfEveryIndependentInputAndNoOther) {
  const Task task = mixed_task();
  const ShapeInstance shape = *task.instantiate(task.bench);
  auto in = BenchInputs::create(task, shape, 2, 99);
  ASSERT_TRUE(in) << in.error().message();
  ASSERT_TRUE(in->has_patches());
  FakeBuffers f(task, shape, 2, ShimKind::candidate);
  in->write(f.buffers, 0, {0, 0});
  in->write(f.buffers, 1, {0, 1});
  const size_t x = differing_elements(f.bytes[{0, 0}], f.bytes[{1, 0}], 4);
  EXPECT_GT(x, 6400u / 64 / 2) << "about one element in 64 of x";
  EXPECT_LE(x, 6400u / 64);
  EXPECT_EQ((f.bytes[{0, 1}]), (f.bytes[{1, 1}])) << "offsets are structured: never patched";
  EXPECT_GT(differing_elements(f.bytes[{0, 2}], f.bytes[{1, 2}], 4), 0u);
  EXPECT_EQ((f.bytes[{0, 3}]), (f.bytes[{1, 3}]))
      << "a one-element tensor has no other value to take";
  // Patched values are values the tensor holds elsewhere.
  std::vector<float> base(6400), patched(6400);
  std::memcpy(base.data(), f.bytes[{0, 0}].data(), 6400 * 4);
  std::memcpy(patched.data(), f.bytes[{1, 0}].data(), 6400 * 4);
  for (size_t e = 0; e < 6400; ++e)
    if (patched[e] != base[e]) {
      EXPECT_NE(std::find(base.begin(), base.end(), patched[e]), base.end())
          << e << ": " << patched[e] << " was " << base[e];
    }
}

TEST(BenchInputs, SwitchingVariantsRewritesThePatchBothWays) {
  const Task task = mixed_task();
  const ShapeInstance shape = *task.instantiate(task.bench);
  auto in = BenchInputs::create(task, shape, 3, 5);
  ASSERT_TRUE(in);
  ASSERT_TRUE(in->add_bases(2).ok());
  EXPECT_EQ(in->bases(), 2);
  EXPECT_EQ(in->contents(), 4);
  EXPECT_EQ(in->initial(2), (ContentId{0, 0})) << "slot 2 holds base 2 % 2";
  FakeBuffers f(task, shape, 3, ShimKind::candidate), g(task, shape, 3, ShimKind::candidate);
  in->write(f.buffers, 1, {1, 0});
  in->switch_content(f.buffers, 1, {1, 0}, {1, 1});
  in->write(g.buffers, 1, {1, 1});
  for (size_t t = 0; t < task.inputs.size(); ++t) EXPECT_EQ((f.bytes[{1, t}]), (g.bytes[{1, t}]));
  EXPECT_TRUE(in->holds(f.buffers, 1, {1, 1}));
  EXPECT_FALSE(in->holds(f.buffers, 1, {1, 0}));
  in->switch_content(f.buffers, 1, {1, 1}, {1, 0});
  EXPECT_TRUE(in->holds(f.buffers, 1, {1, 0}));
  // A modified input is seen.
  f.bytes[{1, 2}][7] ^= 1;
  EXPECT_FALSE(in->holds(f.buffers, 1, {1, 0}));
}

TEST(BenchInputs, BasesAreIndependentDraws) {
  const Task task = mixed_task();
  const ShapeInstance shape = *task.instantiate(task.bench);
  auto in = BenchInputs::create(task, shape, 2, 5);
  ASSERT_TRUE(in && in->add_bases(2).ok());
  FakeBuffers f(task, shape, 2, ShimKind::candidate);
  in->write(f.buffers, 0, {0, 0});
  in->write(f.buffers, 1, {1, 0});
  EXPECT_GT(differing_elements(f.bytes[{0, 0}], f.bytes[{1, 0}], 4), 6000u);
}

TEST(BenchInputs, TheOraclesCopyIsWidenedAndPatchedAlike) {
  const Task task = mixed_task();
  const ShapeInstance shape = *task.instantiate(task.bench);
  auto in = BenchInputs::create(task, shape, 1, 11);
  ASSERT_TRUE(in);
  FakeBuffers f32(task, shape, 1, ShimKind::candidate), f64(task, shape, 1, ShimKind::oracle);
  in->write(f32.buffers, 0, {0, 1});
  in->write(f64.buffers, 0, {0, 0});
  in->switch_content(f64.buffers, 0, {0, 0}, {0, 1});
  const auto* narrow = reinterpret_cast<const float*>(f32.bytes[{0, 0}].data());
  const auto* wide = reinterpret_cast<const double*>(f64.bytes[{0, 0}].data());
  for (size_t e = 0; e < 6400; ++e) ASSERT_EQ(static_cast<double>(narrow[e]), wide[e]) << e;
}

}  // namespace
}  // namespace kf
