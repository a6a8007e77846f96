// Reference for 27_matmul_mish_mish (KernelBench level 2, problem 29):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]      (nn.Linear: W[O,I], bias[O])
//   y[b,o] = mish(mish(z[b,o])),  mish(v) = v * tanh(softplus(v)) = v * tanh(log(1 + exp(v)))
#include <kforge/kernel.h>

#include <cmath>

template <typename A>
A mish(A v) {
  return v * std::tanh(std::log1p(std::exp(v)));
}

template <typename T>
void matmul_mish_mish(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                      int64_t O) {
  using Acc = kf::acc_t<T>;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      y[b * O + o] = T(mish(mish(s + Acc(bias[o]))));
    }
}
