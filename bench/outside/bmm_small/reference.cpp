// Batched C[b] = A[b] B[b]: per matrix, the textbook triple loop with the sum over k innermost.
#include <kforge/kernel.h>

template <typename T>
void bmm_small(const T* A, const T* B, T* C, int64_t Bn, int64_t M, int64_t N, int64_t K) {
  using Acc = kf::acc_t<T>;
  for (int64_t b = 0; b < Bn; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        Acc s = 0;
        for (int64_t k = 0; k < K; ++k)
          s += Acc(A[(b * M + i) * K + k]) * Acc(B[(b * K + k) * N + j]);
        C[(b * M + i) * N + j] = T(s);
      }
}
