// override_clock_hidden — like override_clock, but this file never spells a timing function's
// name, not even in comments: the C library's clock-reading and time-of-day symbols are produced by
// GCC asm labels built from concatenated string literals and attached to innocently named
// functions. A source-text grep finds nothing; the compiled object still exports both names.
// Expected verdict: forbidden (the manifest's message names the clock symbol). The judge must check
// the symbols the built shared object defines (its dynamic symbol table), not the source text.
#include <cstdint>

namespace {
struct ts_t {
  long sec;
  long nsec;
};
}  // namespace

extern "C" int kf_tick(int, ts_t*) __asm__(
    "clock"
    "_get"
    "time");
extern "C" int kf_tod(ts_t*, void*) __asm__(
    "get"
    "time"
    "of"
    "day");

extern "C" int kf_tick(int, ts_t* t) {
  t->sec = 0;
  t->nsec = 1;
  return 0;
}
extern "C" int kf_tod(ts_t* t, void*) {
  t->sec = 0;
  t->nsec = 0;
  return 0;
}

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
