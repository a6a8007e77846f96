// compiler_pragma_bytes — a correct kernel whose compile prints a `#pragma message` holding bytes
// that are not UTF-8 and terminal escape sequences (clear screen, set the window title), which a
// judge that stores diagnostics as JSON or prints them to a terminal must survive.
// Expected verdict: ok: a message is not an error; the stored log holds neither the raw bytes nor
// the escapes.
#include <cstdint>

#pragma message("\xff\xfe\xc3 \x1b[2J\x1b]0;owned\x07 done")

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
