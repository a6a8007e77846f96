// compiler_sig_missing_param — assumes square matrices and drops K: five parameters instead of six.
// Expected verdict: compile_error ("gemm").
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N) {
  const int64_t K = M;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
