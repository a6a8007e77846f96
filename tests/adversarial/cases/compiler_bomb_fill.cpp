// compiler_bomb_fill — an assembler directive asks for a 1 GiB section: `.fill` repeats a byte, so
// the source is one line and the object file is a gigabyte, which would land in the compile cache.
// Expected verdict: compile_error ("too large"): the compiler's file-size limit stops the assembler
// (and a smaller object over the cache's size limit is refused too).
#include <cstdint>

asm(".pushsection .data\n.fill 0x40000000, 1, 0x5a\n.popsection");

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
