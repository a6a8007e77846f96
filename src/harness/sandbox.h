// The parent side of the sandboxed worker: spawns kforge-worker for one compiled solution at one
// shape, owns its buffers (shared memory), and runs the kernel on command with deadlines.
//
//   WorkerSpec spec{.so = so_path, .layout = layout, .dims = shape.dims, ...};
//   Expected<std::unique_ptr<Worker>> w = Worker::start(spec);   // fails only on kforge bugs
//   if ((*w)->fault()) ...                                     // the candidate died loading
//   RunOutcome r = (*w)->run(/*first_set=*/0, /*reps=*/1);      // r.ok, r.seconds, r.fault
//
// Buffers: for each set and tensor, a region of the memfd placed so that the buffer *ends* at a
// page boundary (64-byte aligned start), followed by a guard page the worker maps PROT_NONE, so
// writes past the end fault. The bytes in front of a buffer (its slack) hold a canary pattern
// that the parent checks. See worker_protocol.h for the protocol's design notes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/run_result.h"
#include "support/status.h"

namespace kf {

struct BufferSpec {
  std::string name;
  size_t bytes = 0;
  bool input = false;
};

struct WorkerSpec {
  std::string so;                  // the compiled solution
  std::vector<BufferSpec> layout;  // one set: inputs then outputs
  int sets = 1;                    // copies of the layout (input rotation)
  std::vector<int64_t> dims;
  std::vector<double> scalars;
  int threads = 1;
  double start_timeout_s = 30;
  size_t memory_limit = 0;  // address-space limit in bytes beyond the buffers; 0 = default 4 GiB
  double cpu_limit_s = 0;   // 0: no CPU-time limit beyond the wall-clock deadlines
  std::vector<std::string> preload;  // runtime libraries loaded before the sandbox closes
  // Threads the worker may have alive after a command (the kernel's grant, the runtimes' pools
  // and the worker's own thread); more is the verdict forbidden. 0: 4 * threads + 8.
  int max_threads = 0;
};

// What happened to one command.
struct RunOutcome {
  bool ok = false;
  double seconds = 0;  // parent clock, RUN sent → DONE received
  Verdict verdict =
      Verdict::ok;  // when !ok: crash, timeout, memory_limit, forbidden, compile_error
  std::string message;
};

// Software counters of the worker process (all threads), from /proc: this machine has no
// hardware performance counters, but these still tell whether threads ran and memory faulted.
struct ProcessCounters {
  double cpu_s = 0;  // user + system time
  uint64_t minor_faults = 0, major_faults = 0;
  uint64_t voluntary_switches = 0, involuntary_switches = 0;
  int threads = 0;  // alive now
};

class Worker {
 public:
  static Expected<std::unique_ptr<Worker>> start(const WorkerSpec& spec);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Set when the worker died during start-up (e.g. a forbidden call in a static constructor,
  // or a shared object that does not load).
  const RunOutcome* fault() const { return dead_ ? &death_ : nullptr; }

  // Parent's view of buffer `tensor` of set `set`.
  void* buffer(int set, size_t tensor) const;
  size_t bytes(size_t tensor) const { return spec_.layout[tensor].bytes; }
  int sets() const { return spec_.sets; }

  // Runs the kernel `reps` times on sets first_set, first_set+1, … (mod sets). The deadline
  // covers the whole batch. After a fault the worker is dead and every later call fails.
  RunOutcome run(int first_set, int reps, double timeout_s);
  // A round trip without running the kernel (measures the protocol's overhead).
  RunOutcome ping(double timeout_s = 5);
  // Stops every thread of the worker (SIGSTOP to its process group, waited for) so that a
  // solution that is not being timed cannot use the machine while another one is; run(),
  // ping() and stage_times() resume it first. Idempotent; a dead worker is left as it is.
  void pause();
  void resume();
  bool paused() const { return paused_; }
  // The profiler's instrumented build: nanoseconds per timed stage summed over every call so
  // far, as the shared object counted them (CodegenOptions::stage_timers). Fails when the worker
  // is dead or the object has no stage timers. Evidence only, never a verdict.
  Expected<std::vector<int64_t>> stage_times(double timeout_s = 5);

  // The worker's counters so far (zeros when they cannot be read).
  ProcessCounters counters() const;
  // The worker's process id as the judge sees it (-1 once it was reaped): for reading the CPU
  // time of each of its threads (harness/thread_cpu.h).
  pid_t pid() const { return pid_; }

  // True if every canary in front of every buffer is intact.
  bool canaries_intact(std::string* which) const;
  // Text the candidate wrote to stdout/stderr (capped).
  std::string output_log() const;

 private:
  explicit Worker(const WorkerSpec& spec) : spec_(spec) {}
  // Maps the input and output files (the inputs' sealed), lays the buffers out with their
  // canaries and guard pages, and describes them for the worker's --buffers and --guards.
  Status map_buffers(std::string& buffers, std::string& guards);
  RunOutcome transact(uint32_t op, int first_set, int reps, double timeout_s);
  RunOutcome die(Verdict v, std::string message);
  RunOutcome classify_exit(const std::string& context);
  RunOutcome receive_listener(double timeout_s);
  RunOutcome forbidden_call(const char* what);
  int thread_cap() const;

  WorkerSpec spec_;
  std::vector<size_t> offsets_;  // per set and tensor
  std::vector<size_t> slack_;    // canary bytes in front of each buffer of set 0 layout
  size_t map_size_ = 0;
  void* in_map_ = nullptr;   // the inputs' shared file (sealed: the worker maps it read-only)
  void* out_map_ = nullptr;  // the outputs' shared file
  int in_fd_ = -1, out_fd_ = -1, cmd_fd_ = -1, reply_fd_ = -1;
  int notify_fd_ = -1;  // seccomp listener: readable when a forbidden call is pending
  pid_t pid_ = -1;
  bool dead_ = false;
  bool paused_ = false;
  RunOutcome death_;
  uint64_t nonce_ = 0;
  std::vector<int64_t> stage_ns_;  // the last stage_times reply (count < 0: no timers)
  int stage_count_ = -1;
  std::string dir_, log_path_;
};

}  // namespace kf
