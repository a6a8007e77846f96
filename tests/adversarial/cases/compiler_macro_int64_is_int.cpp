// compiler_macro_int64_is_int — a kernel with int dims, then `#define int64_t int` at the end of
// the file, so every later mention of int64_t (the judge's text after the candidate's) means int
// and the wrong signature looks right.
// Expected verdict: compile_error ("gemm"). The bind text is rewritten with it, but its mangled
// name then encodes int: the separately compiled entry still needs kforge_bind(..., long, long,
// long) and the link with -z defs fails.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}

#define int64_t int
