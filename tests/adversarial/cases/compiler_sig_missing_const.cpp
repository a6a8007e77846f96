// compiler_sig_missing_const — int64_t dims as asked, but writable inputs (float*): the kernel may
// write its inputs without the type system saying so.
// Expected verdict: compile_error ("gemm").
#include <cstdint>

void gemm(float* A, float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
