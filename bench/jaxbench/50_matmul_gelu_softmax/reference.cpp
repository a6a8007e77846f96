// Reference for 50_matmul_gelu_softmax (KernelBench level 2, problem 99):
//   z[b,o] = sum_i x[b,i] * W[o,i] + bias[o]      (nn.Linear: W[O,I], bias[O])
//   g[b,o] = 0.5 * z * (1 + erf(z / sqrt(2)))     (exact GELU)
//   y[b,:] = softmax(g[b,:])                      (over O, with the row max subtracted)
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void matmul_gelu_softmax(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                         int64_t O) {
  using Acc = kf::acc_t<T>;
  const Acc inv_sqrt2 = Acc(1) / std::sqrt(Acc(2));
  std::vector<Acc> g(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(bias[o]);
      g[o] = Acc(0.5) * z * (Acc(1) + std::erf(z * inv_sqrt2));
    }
    Acc m = g[0];
    for (int64_t o = 1; o < O; ++o) m = g[o] > m ? g[o] : m;
    Acc sum = 0;
    for (int64_t o = 0; o < O; ++o) {
      g[o] = std::exp(g[o] - m);
      sum += g[o];
    }
    for (int64_t o = 0; o < O; ++o) y[b * O + o] = T(g[o] / sum);
  }
}
