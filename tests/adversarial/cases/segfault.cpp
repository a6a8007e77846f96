// segfault — writes through a null pointer.
// Expected verdict: crash (SIGSEGV). The worker dies from a signal; the judge must report the
// signal by name and must not hang waiting for a reply that never comes.
#include <cstdint>

void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  // Both volatile: with only `float* volatile p`, GCC 12 -O3 drops the store entirely.
  volatile float* volatile p = nullptr;
  *p = 1.0f;
}
