// Reference for 35_gemm_scaling_hardtanh_gelu (KernelBench level 2, problem 53):
//   z[b,o] = (sum_i x[b,i] * W[o,i] + bias[o]) * scaling_factor    (nn.Linear: W[O,I], bias[O])
//   h[b,o] = min(max(z[b,o], hardtanh_min), hardtanh_max)           (nn.Hardtanh)
//   y[b,o] = 0.5 * h * (1 + erf(h / sqrt(2)))                       (exact GELU)
// Each dot product sums over i in ascending order.
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void gemm_scaling_hardtanh_gelu(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                                int64_t O, kf::acc_t<T> scaling_factor, kf::acc_t<T> hardtanh_min,
                                kf::acc_t<T> hardtanh_max) {
  using Acc = kf::acc_t<T>;
  const Acc inv_sqrt2 = Acc(1) / std::sqrt(Acc(2));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      Acc h = (s + Acc(bias[o])) * scaling_factor;
      if (h < hardtanh_min) h = hardtanh_min;
      if (h > hardtanh_max) h = hardtanh_max;
      y[b * O + o] = T(Acc(0.5) * h * (Acc(1) + std::erf(h * inv_sqrt2)));
    }
}
