// Reference for 37_matmul_swish_scaling (KernelBench level 2, problem 59):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]     (nn.Linear: W[O,I], bias[O])
//   y[b,o] = z * sigmoid(z) * scaling_factor,  sigmoid(v) = 1 / (1 + exp(-v))
// Each dot product sums over i in ascending order.
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void matmul_swish_scaling(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                          int64_t O, kf::acc_t<T> scaling_factor) {
  using Acc = kf::acc_t<T>;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(bias[o]);
      y[b * O + o] = T(z * (Acc(1) / (Acc(1) + std::exp(-z))) * scaling_factor);
    }
}
