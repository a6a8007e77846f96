// Reference for 08_gemm: C = A @ B, row-major, A[M,K], B[K,N], C[M,N].
// Loop order i-k-j with a per-row accumulator: every C[i,j] is still summed over k in ascending
// order, exactly as the textbook i-j-k triple loop, but B is walked along its rows.
#include <kforge/kernel.h>

#include <vector>

template <typename T>
void gemm(const T* A, const T* B, T* C, int64_t M, int64_t N, int64_t K) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> row(static_cast<size_t>(N));
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) row[j] = 0;
    for (int64_t k = 0; k < K; ++k) {
      const Acc a = Acc(A[i * K + k]);
      for (int64_t j = 0; j < N; ++j) row[j] += a * Acc(B[k * N + j]);
    }
    for (int64_t j = 0; j < N; ++j) C[i * N + j] = T(row[j]);
  }
}
