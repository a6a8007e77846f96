// ok_clean_environment — CONTROL. A correct GEMM that writes its result only when the worker's
// environment is the judge's clean one: OpenMP bound one thread per core, idle threads spinning
// briefly (GOMP_SPINCOUNT=30000: side-by-side timing alternates worker processes on the same
// cores, and libgomp's default spin of several ms let one worker's idle threads slow the next),
// and nothing inherited from the judge's own environment (no HOME). Expected verdict: ok; a
// wrong answer means the sandbox's environment changed.
#include <kforge/kernel.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace {
bool is(const char* name, const char* want) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, want) == 0;
}
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  const bool clean = is("OMP_PROC_BIND", "true") && is("OMP_PLACES", "cores") &&
                     is("GOMP_SPINCOUNT", "30000") && std::getenv("HOME") == nullptr;
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    if (!clean) continue;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
