// Reference for 44_matmul_divide_gelu (KernelBench level 2, problem 86):
//   z[b,o] = (sum_i x[b,i] * W[o,i] + bias[o]) / divisor      (nn.Linear: W[O,I], bias[O])
//   y[b,o] = 0.5 * z * (1 + erf(z / sqrt(2)))                 (exact GELU)
// Each dot product sums over i in ascending order.
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void matmul_divide_gelu(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                        int64_t O, kf::acc_t<T> divisor) {
  using Acc = kf::acc_t<T>;
  const Acc inv_sqrt2 = Acc(1) / std::sqrt(Acc(2));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = (s + Acc(bias[o])) / divisor;
      y[b * O + o] = T(Acc(0.5) * z * (Acc(1) + std::erf(z * inv_sqrt2)));
    }
}
