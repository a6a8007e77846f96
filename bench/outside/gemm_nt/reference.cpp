// C = A B^T: C[i, j] = sum over k of A[i, k] * B[j, k], both rows read along k.
#include <kforge/kernel.h>

template <typename T>
void gemm_nt(const T* A, const T* B, T* C, int64_t M, int64_t N, int64_t K) {
  using Acc = kf::acc_t<T>;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      Acc s = 0;
      for (int64_t k = 0; k < K; ++k) s += Acc(A[i * K + k]) * Acc(B[j * K + k]);
      C[i * N + j] = T(s);
    }
}
