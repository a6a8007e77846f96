// Task::instantiate: sizes are checked for overflow and against the memory limit before anything
// is allocated, and costs are finite and non-negative.
#include "task/task.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace kf {
namespace {

Task vector_task() {
  auto t = parse_task(R"(name = "v"
category = "elementwise"
dtype = "f32"
[signature]
function = "f"
dims = ["N", "R"]
inputs = [ { name = "x", dtype = "f32", shape = ["N", "R"] } ]
outputs = [ { name = "y", dtype = "f32", shape = ["N"] } ]
[shapes]
bench = { N = 1024, R = 1 }
tests = [ { N = 1, R = 1 }, { N = 17, R = 1 } ]
[tolerance]
f32 = { rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }
[cost]
flops = "N"
)",
                      "v/task.toml");
  EXPECT_TRUE(t) << t.error().message();
  return *t;
}

TEST(TaskInstantiate, BufferBytesAreTheSumOfOneSet) {
  Task t = vector_task();
  auto s = t.instantiate({{"N", 1000}, {"R", 3}});
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->elements, (std::vector<size_t>{3000, 1000}));
  EXPECT_EQ(s->buffer_bytes, 4u * 4000);
}

TEST(TaskInstantiate, RefusesOverflowingAndOversizedShapes) {
  Task t = vector_task();
  auto over = t.instantiate({{"N", 9007199254740992.0}, {"R", 4096}});
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message(), "shape of 'x': its element count overflows 64 bits");
  auto bytes = t.instantiate({{"N", 4611686018427387904.0 / 2048}, {"R", 2048}});
  ASSERT_FALSE(bytes);
  EXPECT_EQ(bytes.error().message(), "shape of 'x': its size in bytes overflows 64 bits");
  // A zero extent makes the count 0 whatever the other extents are.
  auto empty = t.instantiate({{"N", 9007199254740992.0}, {"R", 0}});
  ASSERT_FALSE(empty);  // x is empty, but y still has N elements of 4 bytes: 32 PiB
  EXPECT_NE(empty.error().message().find("shape N=9007199254740992 R=0 needs 33554432.0 GiB"),
            std::string::npos)
      << empty.error().message();
}

TEST(TaskInstantiate, TheLimitCanBeConfigured) {
  Task t = vector_task();
  ASSERT_EQ(setenv("KFORGE_SHAPE_MEMORY_LIMIT", "4096", 1), 0);
  auto small = t.instantiate({{"N", 100}, {"R", 1}});   // 400 + 800 bytes
  auto large = t.instantiate({{"N", 1000}, {"R", 1}});  // 4000 + 8000 bytes
  unsetenv("KFORGE_SHAPE_MEMORY_LIMIT");
  ASSERT_TRUE(small) << small.error().message();
  ASSERT_FALSE(large);
  EXPECT_EQ(large.error().message(),
            "shape N=1000 R=1 needs 0.0 GiB for one set of its inputs and outputs, more than the "
            "limit of 0.0 GiB (a quarter of this machine's memory, or $KFORGE_SHAPE_MEMORY_LIMIT)");
  EXPECT_GT(shape_memory_limit(), size_t{1} << 28);
}

TEST(TaskInstantiate, DimsAndCostsMustBeSane) {
  Task t = vector_task();
  auto frac = t.instantiate({{"N", 2.5}, {"R", 1}});
  ASSERT_FALSE(frac);
  EXPECT_EQ(frac.error().message(), "dim 'N' must be an integer in [0, 2^53], got 2.5");
  // (The loader instantiates every shape, so these formulas are set after loading.)
  t.flops = *Formula::parse("0 - N");
  auto neg = t.instantiate({{"N", 2}, {"R", 1}});
  ASSERT_FALSE(neg);
  EXPECT_EQ(neg.error().message(), "flops: '0 - N' is negative");
  t.flops = *Formula::parse("N * 1e300 * 1e300");
  auto inf = t.instantiate({{"N", 2}, {"R", 1}});
  ASSERT_FALSE(inf);
  EXPECT_EQ(inf.error().message(), "flops: 'N * 1e300 * 1e300' overflows (a value beyond 1e308)");
}

}  // namespace
}  // namespace kf
