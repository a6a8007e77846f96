// Reference: y[n,d] = x[n,d] / sqrt(mean_d(x[n,:]^2) + eps) * w[d].
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void rmsnorm(const T* x, const T* w, T* y, int64_t N, int64_t D, kf::acc_t<T> eps) {
  using Acc = kf::acc_t<T>;
  for (int64_t n = 0; n < N; ++n) {
    const T* xr = x + n * D;
    T* yr = y + n * D;
    Acc ss = 0;
    for (int64_t d = 0; d < D; ++d) ss += Acc(xr[d]) * Acc(xr[d]);
    const Acc rms = std::sqrt(ss / Acc(D) + eps);
    for (int64_t d = 0; d < D; ++d) yr[d] = T(Acc(xr[d]) / rms * Acc(w[d]));
  }
}
