// y = A^T x (A is K x M), accumulating in kf::acc_t<T>.
#include <kforge/kernel.h>

template <typename T>
void gemv_t(const T* A, const T* x, T* y, int64_t M, int64_t K) {
  using Acc = kf::acc_t<T>;
  for (int64_t m = 0; m < M; ++m) {
    Acc s = 0;
    for (int64_t k = 0; k < K; ++k) s += Acc(A[k * M + m]) * Acc(x[k]);
    y[m] = T(s);
  }
}
