// Reference for 42_gemm_max_subtract_gelu (KernelBench level 2, problem 80, with the mean
// subtracted before the max so the output is not identically zero; see task.toml):
//   z[b,o]  = sum_i x[b,i] * W[o,i] + bias[o]      (nn.Linear: W[O,I], bias[O])
//   mu[b]   = mean_o z[b,o]
//   m[b]    = max_o (z[b,o] - mu[b])
//   y[b,0]  = 0.5 * m * (1 + erf(m / sqrt(2)))      (exact GELU)
// Each dot product and the row sum run in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void gemm_max_subtract_gelu(const T* x, const T* W, const T* bias, T* y, int64_t B, int64_t I,
                            int64_t O) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> z(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b) {
    Acc sum = 0;
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      z[o] = s + Acc(bias[o]);
      sum += z[o];
    }
    const Acc mu = sum / Acc(O);
    Acc m = z[0] - mu;
    for (int64_t o = 1; o < O; ++o) m = z[o] - mu > m ? z[o] - mu : m;
    y[b] = T(Acc(0.5) * m * (Acc(1) + std::erf(m / std::sqrt(Acc(2)))));
  }
}
