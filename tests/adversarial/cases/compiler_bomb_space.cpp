// compiler_bomb_space — the same with `.space` filling 1 GiB of .data with a non-zero byte (zero
// bytes in .bss would cost no file space), under another directive name.
// Expected verdict: compile_error ("too large").
#include <cstdint>

asm(".pushsection .data\n.space 0x40000000, 0x7f\n.popsection");

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
