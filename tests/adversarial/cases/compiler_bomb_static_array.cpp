// compiler_bomb_static_array — a 1 GiB initialized array: one non-zero element puts the whole of
// it in .data, and the assembler writes every byte.
// Expected verdict: compile_error ("too large").
#include <cstdint>

char kBig[1L << 30] = {1};

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  C[0] = kBig[0];
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
