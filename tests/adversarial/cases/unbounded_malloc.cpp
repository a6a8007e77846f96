// unbounded_malloc — allocates 256 MiB blocks forever and touches every page of each (memset), so
// the memory is really resident, not just reserved. When malloc returns NULL it falls back to
// ::operator new, which throws std::bad_alloc (never caught by the kernel).
// Expected verdict: memory_limit ("memory"). Depending on how the judge limits memory the worker
// ends in one of these ways, each to be reported as memory_limit, never as ok or a plain crash:
//   * cgroup memory.max: the kernel OOM-kills it (SIGKILL; memory.events oom_kill increments);
//   * RLIMIT_AS / RLIMIT_DATA: malloc returns NULL, operator new throws std::bad_alloc out of the
//     kernel (a worker that catches std::bad_alloc around the call can report it exactly; one that
//     does not dies with SIGABRT after std::terminate, with peak RSS at the limit).
// Without any limit this eats the machine. DO NOT RUN OUTSIDE THE SANDBOX.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {
void* volatile g_keep = nullptr;  // every block links to the previous one: nothing can be elided
}

void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  const std::size_t block = std::size_t(256) << 20;
  for (;;) {
    void* p = std::malloc(block);
    if (p == nullptr) p = ::operator new(block);  // throws std::bad_alloc
    std::memset(p, 0x5a, block);
    *static_cast<void**>(p) = g_keep;
    g_keep = p;
  }
}
