// compiler_bomb_incbin — `.incbin` pastes a file into the object: the assembler's own executable
// (/proc/self/exe, about 1 MiB, readable wherever the assembler runs) 320 times over, a third of a
// gigabyte from one line.
// Expected verdict: compile_error ("too large"): the file-size limit stops the assembler, or the
// object is over the cache's limit.
#include <cstdint>

asm(".pushsection .data\n.rept 320\n.incbin \"/proc/self/exe\"\n.endr\n.popsection");

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
