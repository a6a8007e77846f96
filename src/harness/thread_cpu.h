// CPU time of a worker during its timed batches, to tell a kernel that kept to its thread grant
// from one that did not.
//
//   CpuLedger ledger(/*threads=*/1, /*granted_cpus=*/{0});
//   ledger.begin(w.pid());  run the batch;  w.pause();  ledger.end(w.pid(), batch_wall_s);
//   ledger.beyond_capacity_s()   // CPU seconds no `threads` threads could have done
//   ledger.escaped_s()           // CPU seconds of threads that left the granted CPUs
//
// Two signs of threads beyond the grant:
//   - capacity: in a batch, `threads` threads can do at most `threads` times the batch's span of
//     CPU time (from just before the worker is resumed to just after it is stopped again); the
//     process's CPU time beyond that (its CPU clock counts exited threads too) was done by more
//     threads. On a loaded machine extra threads get only a share of a core each, so this shows
//     fully only when cores are free.
//   - escape: the timed workers start confined to the granted CPUs (placement.h), and OpenMP
//     binds its threads inside that mask; a thread whose mask reaches beyond it moved itself
//     there (sched_setaffinity) to run beside the grant, and its CPU time counts whatever the
//     load. Threads are looked at after every batch, and, where a CPU outside the grant is free
//     for it, every half millisecond during the batch by a watcher thread on that CPU, which
//     sees threads that escape and exit within one call too.
// Several threads sharing the granted CPUs are neither: they gain nothing.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace kf {

struct CpuSnapshot {
  double process_s = 0;               // every thread, exited ones included
  std::map<pid_t, double> threads_s;  // live threads: time on a CPU
  bool ok = false;                    // false when the worker's clocks cannot be read
};

CpuSnapshot read_cpu(pid_t pid);

// Whether thread `tid` may run on a CPU outside `granted` (false when its mask cannot be read).
bool reaches_beyond(pid_t tid, const std::vector<int>& granted);

// The threads of a worker seen outside the granted CPUs, and the most CPU time each was seen to
// have run (since it started). Thread-safe.
class EscapeLog {
 public:
  explicit EscapeLog(std::vector<int> granted) : granted_(std::move(granted)) {}
  // Looks at every live thread of `pid` once (records nothing when `record` is false: the
  // same work, for a worker that is not being judged).
  void scan(pid_t pid, bool record = true);
  double seconds() const;
  int threads() const;

 private:
  std::vector<int> granted_;
  mutable std::mutex m_;
  std::map<pid_t, double> escaped_;
};

// A thread that calls EscapeLog::scan on the armed worker every half millisecond, pinned to the
// CPUs outside the grant (not started when there are none).
class EscapeWatcher {
 public:
  EscapeWatcher(EscapeLog& log, const std::vector<int>& granted);
  ~EscapeWatcher();
  EscapeWatcher(const EscapeWatcher&) = delete;
  EscapeWatcher& operator=(const EscapeWatcher&) = delete;
  void arm(pid_t pid, bool record);
  // Returns once the watcher is idle.
  void disarm();

 private:
  void loop(std::vector<int> cpus);
  EscapeLog& log_;
  std::mutex m_;
  std::condition_variable cv_;
  pid_t pid_ = 0;
  bool record_ = true, stop_ = false, scanning_ = false;
  std::thread thread_;
};

class CpuLedger {
 public:
  // `granted_cpus`: the CPUs the worker was started on; empty when it was not confined.
  CpuLedger(int threads, const std::vector<int>& granted_cpus)
      : threads_(threads), escapes_(granted_cpus), watcher_(escapes_, granted_cpus) {}

  // Around one batch: begin() before the worker is resumed, end() once it is stopped again.
  // The CPU time between an end() (or watch()) and the next begin() (or watch()), when the
  // worker was stopped, is counted apart: watch() once before the first batch, once after the
  // last.
  void watch(pid_t pid);
  void begin(pid_t pid);
  void end(pid_t pid, double wall_s);
  // Around another solution's batch: the same watching (so every batch is timed beside the
  // same watcher), nothing recorded.
  void begin_other(pid_t pid) { watcher_.arm(pid, false); }
  void end_other() { watcher_.disarm(); }

  double in_batches_s() const { return process_s_; }
  double wall_s() const { return wall_s_; }
  double beyond_capacity_s() const { return beyond_s_; }
  double escaped_s() const { return escapes_.seconds(); }
  int escaped_threads() const { return escapes_.threads(); }
  double while_stopped_s() const { return stopped_s_; }
  // False when some batch's clocks could not be read.
  bool ok() const { return ok_; }

 private:
  int threads_;
  EscapeLog escapes_;
  EscapeWatcher watcher_;
  CpuSnapshot before_, last_;  // last_: at the last end() or watch()
  std::chrono::steady_clock::time_point begun_;
  double process_s_ = 0, wall_s_ = 0, beyond_s_ = 0, stopped_s_ = 0;
  bool ok_ = true;
};

}  // namespace kf
