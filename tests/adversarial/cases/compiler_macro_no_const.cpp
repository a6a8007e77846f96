// compiler_macro_no_const — inputs declared writable (float*), then `#define const` so the judge's
// `const float*` disappears from whatever text follows the candidate's.
// Expected verdict: compile_error ("gemm"). The bind text loses its const too, and with it the
// mangled name the separately compiled entry links against.
#include <cstdint>

void gemm(float* A, float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

#define const
