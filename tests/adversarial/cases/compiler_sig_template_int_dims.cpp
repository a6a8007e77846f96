// compiler_sig_template_int_dims — a function template (allowed) whose dims are int: no T makes
// its type the task's.
// Expected verdict: compile_error ("gemm"): template argument deduction against the exact pointer
// type fails.
#include <cstdint>

template <typename T>
void gemm(const T* A, const T* B, T* C, int M, int N, int K) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      T s = 0;
      for (int k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
