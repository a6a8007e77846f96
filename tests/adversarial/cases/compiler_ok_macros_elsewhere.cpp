// compiler_ok_macros_elsewhere — CONTROL. A correct kernel whose file leaves macros defined that
// would have broken text appended to it (`kf_buf`, `static_cast`, `extern`, `void`-free names):
// none of them can reach the judge's entry, which is compiled apart.
// Expected verdict: ok.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

#define kf_buf nullptr
#define kf_dims nullptr
#define static_cast reinterpret_cast
#define visibility(x) visibility("hidden")
