// compiler_macro_float_is_double — a kernel over double buffers, then `#define float double`, so
// the judge's text after the candidate's names double wherever it says float.
// Expected verdict: compile_error ("gemm"). The entry is compiled apart, where float is float: the
// bind's mangled name (now over double) does not match what the entry calls.
#include <cstdint>

void gemm(const double* A, const double* B, double* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

#define float double
