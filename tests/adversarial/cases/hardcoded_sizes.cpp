// hardcoded_sizes — ignores M, N, K and always computes a 256 x 256 x 256 GEMM: correct only at the
// bench shape (M = N = K = 256), which is the only shape that is timed.
// Expected verdict: wrong_answer (or crash, or forbidden). At the smaller test shapes it reads
// past the ends of A and B and writes past the end of C: depending on how the judge lays out and
// guards its buffers this produces a wrong C (wrong_answer), trips a canary/guard check after C
// (forbidden: a write outside the outputs) or faults (crash). It must never be ok: the test shapes
// are checked, not just the bench shape.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  (void)M;
  (void)N;
  (void)K;
  constexpr int64_t n = 256;
  for (int64_t i = 0; i < n; ++i) {
    float* c = C + i * n;
    for (int64_t j = 0; j < n; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < n; ++k) {
      const float a = A[i * n + k];
      const float* b = B + k * n;
      for (int64_t j = 0; j < n; ++j) c[j] += a * b[j];
    }
  }
}
