// Where the solutions timed side by side run and where their buffers live, made the same for
// every one of them.
//
//   {
//     TimedPlacement place(/*threads=*/1, /*bytes_per_worker=*/worker_bytes);
//     start the timed workers;        // they inherit the CPU mask; their pages come from big
//     blocks
//   }                                 // the judge's own mask is back, the ballast freed
//
// Cores. Every timed worker is started with the same CPU mask: the first `threads` CPUs the judge
// may use. OpenMP binds its threads inside it (OMP_PROC_BIND); a kernel without OpenMP would
// otherwise float, and two solutions would be measured on different cores.
//
// Memory. A memory-bound kernel's speed depends on the physical pages behind its buffers: on a
// VM, buffers allocated from the small free blocks that a busy machine leaves behind (scattered
// 4 KiB pages: no TLB coalescing, more nested page walks) stream measurably slower than buffers
// from large blocks. The allocator hands out its smallest free blocks first, so the first worker
// started took them all and every later one got large blocks: whichever solution was started
// first lost (the candidate, always). Before the timed workers start, a ballast takes
// the free memory that sits in blocks under 64 KiB (from /proc/buddyinfo), so that every timed
// worker's pages come from large blocks alike; it is freed once they are started. Skipped for
// small buffers (they fit the TLB's reach either way) and capped at a quarter of the available
// memory.
#pragma once

#include <sched.h>

#include <cstddef>
#include <string>
#include <vector>

namespace kf {

// Free bytes in blocks smaller than 2^order pages, summed over /proc/buddyinfo's zones (0 when it
// cannot be read).
size_t free_bytes_below_order(const std::string& buddyinfo, int order);

class TimedPlacement {
 public:
  // Workers whose buffers are smaller than this get no ballast.
  static constexpr size_t kBallastFrom = size_t{64} << 20;

  TimedPlacement(int threads, size_t bytes_per_worker);
  ~TimedPlacement();
  TimedPlacement(const TimedPlacement&) = delete;
  TimedPlacement& operator=(const TimedPlacement&) = delete;

  // Frees the ballast (the workers are started) and gives the judge its own CPU mask back.
  void release();
  size_t ballast_bytes() const { return ballast_bytes_; }
  // "CPU 0" or "CPUs 0-1", empty when the mask was left as it was.
  const std::string& cpus() const { return cpus_; }
  // The CPUs the workers were confined to (empty when the mask was left as it was).
  const std::vector<int>& granted() const { return granted_; }

 private:
  cpu_set_t saved_;
  bool pinned_ = false;
  void* ballast_ = nullptr;
  size_t ballast_bytes_ = 0;
  std::string cpus_;
  std::vector<int> granted_;
};

}  // namespace kf
