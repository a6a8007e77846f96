// compiler_sig_int_dims — the right buffer types, but int dims. A shim appended to the candidate
// and calling gemm(...) accepted it: int64_t narrows to int silently at the call.
// Expected verdict: compile_error ("gemm"). The bind text takes gemm's address as a pointer of the
// exact type, which allows no conversion.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
