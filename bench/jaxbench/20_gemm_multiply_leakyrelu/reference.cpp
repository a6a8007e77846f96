// Reference for 20_gemm_multiply_leakyrelu (KernelBench level 2, problem 12):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]      (nn.Linear: W[O,I], bias[O])
//   v[b,o] = z[b,o] * multiplier
//   y[b,o] = v > 0 ? v : v * negative_slope        (nn.LeakyReLU(negative_slope))
#include <kforge/kernel.h>

template <typename T>
void gemm_multiply_leakyrelu(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                             int64_t O, T multiplier, T negative_slope) {
  using Acc = kf::acc_t<T>;
  const Acc m = Acc(multiplier), slope = Acc(negative_slope);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc v = (s + Acc(bias[o])) * m;
      y[b * O + o] = T(v > Acc(0) ? v : v * slope);
    }
}
