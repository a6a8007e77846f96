#include "harness/placement.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>

#include "support/fs.h"

namespace kf {
namespace {

// Blocks under 2^4 pages (64 KiB) count as fragments: a worker's pages drawn from them are
// scattered; from larger blocks they run contiguous far beyond what the TLB coalesces.
constexpr int kFragmentOrder = 4;

size_t available_bytes() {
  auto text = read_file("/proc/meminfo");
  if (!text) return 0;
  std::istringstream in(*text);
  std::string key;
  size_t kb = 0;
  while (in >> key) {
    if (key == "MemAvailable:" && in >> kb) return kb << 10;
    std::string rest;
    std::getline(in, rest);
  }
  return 0;
}

}  // namespace

size_t free_bytes_below_order(const std::string& buddyinfo, int order) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::istringstream lines(buddyinfo);
  std::string line;
  size_t pages = 0;
  while (std::getline(lines, line)) {
    // "Node 0, zone   Normal  36102  37789 ...": counts of free blocks of order 0, 1, ...
    const size_t z = line.find("zone");
    if (z == std::string::npos) continue;
    std::istringstream in(line.substr(z + 4));
    std::string zone;
    in >> zone;
    if (zone == "DMA") continue;  // the first 16 MiB: never used for these buffers
    size_t count = 0;
    for (int o = 0; o < order && in >> count; ++o) pages += count << o;
  }
  return pages * page;
}

TimedPlacement::TimedPlacement(int threads, size_t bytes_per_worker) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof mine, &mine) == 0 && CPU_COUNT(&mine) > threads) {
    saved_ = mine;
    cpu_set_t first;
    CPU_ZERO(&first);
    int taken = 0, lo = -1, hi = -1;
    for (int c = 0; c < CPU_SETSIZE && taken < threads; ++c)
      if (CPU_ISSET(c, &mine)) {
        CPU_SET(c, &first);
        granted_.push_back(c);
        lo = lo < 0 ? c : lo;
        hi = c;
        ++taken;
      }
    if (sched_setaffinity(0, sizeof first, &first) == 0) {
      pinned_ = true;
      cpus_ = lo == hi ? fmt::format("CPU {}", lo) : fmt::format("CPUs {}-{}", lo, hi);
    } else {
      granted_.clear();
    }
  }
  if (bytes_per_worker < kBallastFrom) return;
  auto info = read_file("/proc/buddyinfo");
  if (!info) return;
  const size_t want =
      std::min(free_bytes_below_order(*info, kFragmentOrder), available_bytes() / 4);
  if (want == 0) return;
  // Plain 4 KiB pages: huge pages would come from exactly the large blocks the workers need.
  void* p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return;
  madvise(p, want, MADV_NOHUGEPAGE);
  if (madvise(p, want, MADV_POPULATE_WRITE) != 0) {
    munmap(p, want);
    return;
  }
  ballast_ = p;
  ballast_bytes_ = want;
}

void TimedPlacement::release() {
  if (ballast_) munmap(ballast_, ballast_bytes_);
  ballast_ = nullptr;
  if (pinned_) sched_setaffinity(0, sizeof saved_, &saved_);
  pinned_ = false;
}

TimedPlacement::~TimedPlacement() {
  release();
}

}  // namespace kf
