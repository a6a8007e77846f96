// compiler_ok_template — CONTROL. The kernel as a function template over the element type, like a
// task's reference.cpp: the judge instantiates it at the task's types.
// Expected verdict: ok.
#include <cstdint>

template <typename T>
void gemm(const T* A, const T* B, T* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      T s = 0;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
