// compiler_include_root_home — reads from root's home directory (the judge often runs as root):
// a shell profile, a history, a key.
// Expected verdict: compile_error ("includes are limited").
#include </root/.bashrc>
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
