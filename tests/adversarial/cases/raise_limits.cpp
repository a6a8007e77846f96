// raise_limits — tries to lift the judge's resource limits (setrlimit RLIMIT_AS / RLIMIT_DATA /
// RLIMIT_RSS / RLIMIT_STACK / RLIMIT_CPU / RLIMIT_NPROC to RLIM_INFINITY, and the same through
// prlimit on itself), then asks for 64 GiB in one piece and touches it; when that fails it
// allocates and touches 1 GiB blocks without bound (falling back to operator new, which throws
// std::bad_alloc).
// Expected verdict: memory_limit (or forbidden). Raising a hard limit fails with EPERM when the
// judge sets soft == hard limits, and the allocation then hits the limit -> memory_limit; a judge
// that denies setrlimit/prlimit64 outright reports forbidden instead. Either way the diagnostics
// should contain "limit" ("memory limit", "setrlimit", "prlimit"). Must never end in ok.
// DO NOT RUN OUTSIDE THE SANDBOX (it touches 64 GiB when nothing stops it).
#include <sys/resource.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace {
void* volatile g_keep = nullptr;

void lift(int resource) {
  struct rlimit unlimited = {RLIM_INFINITY, RLIM_INFINITY};
  setrlimit(resource, &unlimited);
  prlimit(0, static_cast<__rlimit_resource>(resource), &unlimited, nullptr);
  struct rlimit cur;
  if (getrlimit(resource, &cur) == 0) {  // at least raise the soft limit to the hard one
    cur.rlim_cur = cur.rlim_max;
    setrlimit(resource, &cur);
  }
}
}  // namespace

void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  lift(RLIMIT_AS);
  lift(RLIMIT_DATA);
  lift(RLIMIT_RSS);
  lift(RLIMIT_STACK);
  lift(RLIMIT_CPU);
  lift(RLIMIT_NPROC);
  const std::size_t huge = std::size_t(64) << 30;
  if (void* p = std::malloc(huge)) {
    std::memset(p, 0x5a, huge);
    g_keep = p;
  }
  const std::size_t block = std::size_t(1) << 30;
  for (;;) {
    void* p = std::malloc(block);
    if (p == nullptr) p = ::operator new(block);  // throws std::bad_alloc
    std::memset(p, 0x5a, block);
    *static_cast<void**>(p) = g_keep;
    g_keep = p;
  }
}
