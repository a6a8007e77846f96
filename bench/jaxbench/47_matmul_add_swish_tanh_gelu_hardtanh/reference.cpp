// Reference for 47_matmul_add_swish_tanh_gelu_hardtanh (KernelBench level 2, problem 95):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o] + add_value[o]     (nn.Linear: W[O,I], bias[O])
//   s      = sigmoid(z) * z                                     (Swish)
//   t      = tanh(s)
//   g      = 0.5 * t * (1 + erf(t / sqrt(2)))                   (exact GELU)
//   y[b,o] = min(max(g, -1), 1)                                 (Hardtanh(-1, 1))
// Each dot product sums over i in ascending order.
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void matmul_add_swish_tanh_gelu_hardtanh(const T* x, const T* W, const T* bias, const T* add_value,
                                         T* y, int64_t B, int64_t I, int64_t O) {
  using Acc = kf::acc_t<T>;
  const Acc inv_sqrt2 = Acc(1) / std::sqrt(Acc(2));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(bias[o]) + Acc(add_value[o]);
      const Acc t = std::tanh(Acc(1) / (Acc(1) + std::exp(-z)) * z);
      Acc g = Acc(0.5) * t * (Acc(1) + std::erf(t * inv_sqrt2));
      g = g < Acc(-1) ? Acc(-1) : (g > Acc(1) ? Acc(1) : g);
      y[b * O + o] = T(g);
    }
}
