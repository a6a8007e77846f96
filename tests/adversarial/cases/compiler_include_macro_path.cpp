// compiler_include_macro_path — the path is spelled through a macro, so no directive in the source
// names it literally: a text scan of the source does not see it.
// Expected verdict: compile_error ("includes are limited"), from the compiler's own list of the
// headers it opened (or, where the jail denies the read, from the error naming the path).
#include <cstdint>
#define STR(x) #x
#define PATH_OF(x) STR(x)
#include PATH_OF(/etc/hostname)

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
