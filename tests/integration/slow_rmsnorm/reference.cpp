// Reference: y[n,d] = x[n,d] / sqrt(mean_d(x[n,:]^2) + eps) * w[d], with the mean square
// recomputed for every element (O(N*D^2)): slow on purpose, see task.toml.
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void rmsnorm(const T* x, const T* w, T* y, int64_t N, int64_t D, kf::acc_t<T> eps) {
  using Acc = kf::acc_t<T>;
  for (int64_t n = 0; n < N; ++n) {
    const T* xr = x + n * D;
    T* yr = y + n * D;
    for (int64_t d = 0; d < D; ++d) {
      Acc ss = 0;
      for (int64_t k = 0; k < D; ++k) ss += Acc(xr[k]) * Acc(xr[k]);
      yr[d] = T(Acc(xr[d]) / std::sqrt(ss / Acc(D) + eps) * Acc(w[d]));
    }
  }
}
