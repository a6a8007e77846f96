// compiler_include_climb — a relative path that climbs out of the build directory to the root and
// down into /etc: no absolute path in the directive.
// Expected verdict: compile_error ("includes are limited").
#include "../../../../../../../../../../../../etc/hostname"
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
