// Placement of the timed workers (harness/placement.h): the free memory that sits in small blocks,
// read from /proc/buddyinfo, and the CPU mask the workers inherit.
#include <gtest/gtest.h>
#include <unistd.h>

#include "harness/placement.h"

namespace kf {
namespace {

TEST(Placement, FreeBytesInSmallBlocksFromBuddyinfo) {
  const std::string info =
      "Node 0, zone      DMA      1      1      1      1      1\n"
      "Node 0, zone    DMA32      2      0      1      0      9\n"
      "Node 0, zone   Normal     10      4      2      1      7\n";
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  // Orders 0..3 of DMA32 and Normal (DMA is skipped): 2 + 4 + 10 + 8 + 8 + 8 pages.
  EXPECT_EQ(free_bytes_below_order(info, 4), (2 + 1 * 4 + 10 + 4 * 2 + 2 * 4 + 1 * 8) * page);
  EXPECT_EQ(free_bytes_below_order(info, 1), 12 * page);
  EXPECT_EQ(free_bytes_below_order("garbage\n\nzone", 4), 0u);
}

TEST(Placement, TheWorkersInheritTheFirstGrantedCpusAndTheJudgeGetsItsMaskBack) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  if (CPU_COUNT(&before) < 2) GTEST_SKIP() << "needs two CPUs";
  {
    TimedPlacement place(1, 0);
    cpu_set_t now;
    CPU_ZERO(&now);
    ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
    EXPECT_EQ(CPU_COUNT(&now), 1);
    ASSERT_EQ(place.granted().size(), 1u);
    EXPECT_TRUE(CPU_ISSET(place.granted()[0], &now));
    EXPECT_EQ(place.ballast_bytes(), 0u) << "small buffers need no ballast";
  }
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
}

TEST(Placement, AGrantOfEveryCpuLeavesTheMaskAlone) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  ASSERT_EQ(sched_getaffinity(0, sizeof mine, &mine), 0);
  TimedPlacement place(CPU_COUNT(&mine), 0);
  EXPECT_TRUE(place.granted().empty());
  EXPECT_EQ(place.cpus(), "");
}

}  // namespace
}  // namespace kf
