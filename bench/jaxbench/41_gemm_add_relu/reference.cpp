// Reference for 41_gemm_add_relu (KernelBench level 2, problem 76):
//   y[b,o] = max(sum_i x[b,i] * W[o,i] + bias[o], 0)     (nn.Linear(bias=False): W[O,I]; bias[O])
// Each dot product sums over i in ascending order.
#include <kforge/kernel.h>

template <typename T>
void gemm_add_relu(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I, int64_t O) {
  using Acc = kf::acc_t<T>;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(bias[o]);
      y[b * O + o] = T(z > Acc(0) ? z : Acc(0));
    }
}
