// Reference for 45_gemm_groupnorm_swish_multiply_swish (KernelBench level 2, problem 88):
//   z[b,o]  = sum_i x[b,i] * W[o,i] + lin_bias[o]                    (nn.Linear: W[O,I])
//   GroupNorm(G, O) over the O features of each row, groups of Cg = O / G consecutive features:
//   mu[b,g] = mean_{j<Cg} z[b, g*Cg + j],  var[b,g] = mean_j (z[b, g*Cg + j] - mu[b,g])^2
//   n[b,o]  = (z[b,o] - mu[b,g]) / sqrt(var[b,g] + eps) * gn_weight[o] + gn_bias[o],  g = o / Cg
//   s[b,o]  = n * sigmoid(n) * multiply_weight[o]
//   y[b,o]  = s * sigmoid(s),  sigmoid(v) = 1 / (1 + exp(-v))
// Each dot product and each group sum runs in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void gemm_groupnorm_swish_multiply_swish(const T* x, const T* W, const T* lin_bias,
                                         const T* gn_weight, const T* gn_bias,
                                         const T* multiply_weight, T* y, int64_t B, int64_t I,
                                         int64_t O, int64_t G, kf::acc_t<T> eps) {
  using Acc = kf::acc_t<T>;
  const int64_t Cg = O / G;
  std::vector<Acc> z(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      z[o] = s + Acc(lin_bias[o]);
    }
    for (int64_t g = 0; g < G; ++g) {
      Acc mean = 0;
      for (int64_t j = 0; j < Cg; ++j) mean += z[g * Cg + j];
      mean /= Acc(Cg);
      Acc var = 0;
      for (int64_t j = 0; j < Cg; ++j) var += (z[g * Cg + j] - mean) * (z[g * Cg + j] - mean);
      var /= Acc(Cg);
      const Acc rstd = Acc(1) / std::sqrt(var + eps);
      for (int64_t j = 0; j < Cg; ++j) {
        const int64_t o = g * Cg + j;
        const Acc n = (z[o] - mean) * rstd * Acc(gn_weight[o]) + Acc(gn_bias[o]);
        const Acc s = n / (Acc(1) + std::exp(-n)) * Acc(multiply_weight[o]);
        y[b * O + o] = T(s / (Acc(1) + std::exp(-s)));
      }
    }
  }
}
