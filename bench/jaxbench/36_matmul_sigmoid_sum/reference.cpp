// Reference for 36_matmul_sigmoid_sum (KernelBench level 2, problem 56):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]     (nn.Linear: W[O,I], bias[O])
//   y[b,0] = sum_o sigmoid(z[b,o]),  sigmoid(v) = 1 / (1 + exp(-v))
// Each dot product sums over i in ascending order; the row sum runs over o in ascending order.
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void matmul_sigmoid_sum(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                        int64_t O) {
  using Acc = kf::acc_t<T>;
  for (int64_t b = 0; b < B; ++b) {
    Acc row = 0;
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(bias[o]);
      row += Acc(1) / (Acc(1) + std::exp(-z));
    }
    y[b] = T(row);
  }
}
