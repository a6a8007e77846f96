// partial_output — computes only the first half of C's rows (rows [0, M/2)); the rest keep
// whatever the judge left there.
// Expected verdict: wrong_answer. The judge fills outputs with NaN before every run, so the
// untouched rows read NaN ("NaN" in the diagnostics). At M = 1 no row is computed at all.
// A judge that reuses the previous run's (correct) output buffer without refilling it would be
// fooled on repeated runs.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M / 2; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
