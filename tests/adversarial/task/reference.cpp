// Reference for the adversarial fixture task: plain row-major GEMM, C = A @ B.
// Instantiated by the judge at double (the oracle) and at float (the speed baseline).
#include <kforge/kernel.h>

template <typename T>
void gemm(const T* A, const T* B, T* C, int64_t M, int64_t N, int64_t K) {
  using Acc = kf::acc_t<T>;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      Acc s = 0;
      for (int64_t k = 0; k < K; ++k) s += Acc(A[i * K + k]) * Acc(B[k * N + j]);
      C[i * N + j] = T(s);
    }
}
