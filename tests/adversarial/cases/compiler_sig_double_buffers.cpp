// compiler_sig_double_buffers — a correct GEMM in double (computes in f64, so it would pass the
// tolerance if the bytes were reinterpreted the right way, which they are not).
// Expected verdict: compile_error ("gemm"): const double* is not const float*.
#include <cstdint>

void gemm(const double* A, const double* B, double* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
