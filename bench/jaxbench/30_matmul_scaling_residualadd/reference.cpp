// Reference for 30_matmul_scaling_residualadd (KernelBench level 2, problem 40):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]      (nn.Linear: W[O,I], bias[O])
//   y[b,o] = z[b,o] * scaling_factor + z[b,o]      (original_x = x.clone().detach(); x = x * s;
//                                                   x = x + original_x)
#include <kforge/kernel.h>

template <typename T>
void matmul_scaling_residualadd(const T* x, const T* W, const T* bias, T* y, int64_t B,
                                int64_t I, int64_t O, T scaling_factor) {
  using Acc = kf::acc_t<T>;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(bias[o]);
      y[b * O + o] = T(z * Acc(scaling_factor) + z);
    }
}
