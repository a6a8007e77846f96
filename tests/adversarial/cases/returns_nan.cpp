// returns_nan — computes a correct C, then overwrites one element (the middle one; the only one at
// M = N = 1) with a quiet NaN.
// Expected verdict: wrong_answer ("NaN"). NaN where the oracle is finite never passes, even though
// every comparison with NaN is false: a checker written as `if (err > tol) fail` lets NaN through,
// and a rel_l2 computed with fmax-style reductions can silently drop it.
#include <cstdint>
#include <limits>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  if (M * N > 0) C[(M * N) / 2] = std::numeric_limits<float>::quiet_NaN();
}
