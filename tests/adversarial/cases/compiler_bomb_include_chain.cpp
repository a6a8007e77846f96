// compiler_bomb_include_chain — the file includes itself twice at every level until the include
// depth reaches 30: 2^30 inclusions of its own (allowed) text, an exponential preprocessing bomb
// that also floods the compiler's include listing.
// Expected verdict: compile_error ("timed out").
// DO NOT COMPILE OUTSIDE A LIMITED ENVIRONMENT.
#if __INCLUDE_LEVEL__ < 30
#include __FILE__
#include __FILE__
#endif
#if __INCLUDE_LEVEL__ == 0
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
#endif
