// compiler_include_etc_passwd — `#include "/etc/passwd"`: the compiler parses the host's user
// list as C++ and quotes its lines in the error messages the judge stores and shows.
// Expected verdict: compile_error ("includes are limited"), and none of the file's text in the
// diagnostics (the unit test toolchain_test checks that absence on a file it writes itself).
#include "/etc/passwd"
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
