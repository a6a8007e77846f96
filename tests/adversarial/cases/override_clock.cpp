// override_clock — a correct kernel that also defines (and exports) the C library's timing
// functions clock_gettime, gettimeofday, time and clock, plus libstdc++'s
// std::chrono::{steady,system}_clock::now, all returning a frozen tiny time, hoping that a timer
// running in the same process binds to them and measures ~0 ns.
// Expected verdict: forbidden ("clock_gettime"). The judge times in the parent, so the override
// does not fool it, but a candidate that defines C-library (or libstdc++) timing symbols is refused
// outright: the judge must inspect the built shared object's dynamic symbol table (nm -D
// --defined-only / readelf --dyn-syms, matching mangled C++ names too), not grep the source — see
// override_clock_hidden.cpp for a variant whose source never spells the names.
#include <sys/time.h>
#include <time.h>

#include <chrono>
#include <cstdint>

extern "C" {
int clock_gettime(clockid_t clk, struct timespec* ts) noexcept {
  (void)clk;
  ts->tv_sec = 0;  // glibc declares ts nonnull
  ts->tv_nsec = 1;
  return 0;
}
int gettimeofday(struct timeval* tv, void* tz) noexcept {
  (void)tz;
  tv->tv_sec = 0;  // glibc declares tv nonnull
  tv->tv_usec = 0;
  return 0;
}
time_t time(time_t* t) noexcept {
  if (t) *t = 0;
  return 0;
}
clock_t clock() noexcept {
  return 0;
}
}

namespace std::chrono {
inline namespace _V2 {
steady_clock::time_point steady_clock::now() noexcept {
  return time_point(duration(1));
}
system_clock::time_point system_clock::now() noexcept {
  return time_point(duration(1));
}
}  // namespace _V2
}  // namespace std::chrono

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
