// Reference for 19_matmul_subtract_multiply_relu (KernelBench level 2, problem 9):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]      (nn.Linear: W[O,I], bias[O])
//   y[b,o] = max((z[b,o] - subtract_value) * multiply_value, 0)
// The subtraction, the multiplication and the ReLU are applied in that order.
#include <kforge/kernel.h>

template <typename T>
void matmul_subtract_multiply_relu(const T* x, const T* W, const T* bias, T* y, int64_t B,
                                   int64_t I, int64_t O, T subtract_value, T multiply_value) {
  using Acc = kf::acc_t<T>;
  const Acc sub = Acc(subtract_value), mul = Acc(multiply_value);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      Acc v = (s + Acc(bias[o]) - sub) * mul;
      if (v < Acc(0)) v = Acc(0);
      y[b * O + o] = T(v);
    }
}
