// Reference for 29_matmul_swish_sum_groupnorm (KernelBench level 2, problem 37):
//   z[b,o] = sum_i x[b,i] * W[o,i] + lin_bias[o]     (nn.Linear: W[O,I], lin_bias[O])
//   t[b,o] = sigmoid(z[b,o]) * z[b,o] + bias[o]       (Swish, then the extra bias)
//   group g = o / Cg holds features g*Cg .. g*Cg+Cg-1 of a row (O = G * Cg)   (nn.GroupNorm)
//   mu[b,g] = mean of t over the group; var[b,g] = mean of (t - mu)^2       (biased)
//   y[b,o] = (t[b,o] - mu[b,g]) / sqrt(var[b,g] + eps) * gamma[o] + beta[o]
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void matmul_swish_sum_groupnorm(const T* x, const T* W, const T* lin_bias, const T* bias,
                                const T* gamma, const T* beta, T* y, int64_t B, int64_t I,
                                int64_t G, int64_t Cg, T eps) {
  using Acc = kf::acc_t<T>;
  const int64_t O = G * Cg;
  std::vector<Acc> t(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      const Acc z = s + Acc(lin_bias[o]);
      t[o] = Acc(1) / (Acc(1) + std::exp(-z)) * z + Acc(bias[o]);
    }
    for (int64_t g = 0; g < G; ++g) {
      const Acc* tg = t.data() + g * Cg;
      Acc mean = 0;
      for (int64_t c = 0; c < Cg; ++c) mean += tg[c];
      mean /= Acc(Cg);
      Acc var = 0;
      for (int64_t c = 0; c < Cg; ++c) var += (tg[c] - mean) * (tg[c] - mean);
      var /= Acc(Cg);
      const Acc denom = std::sqrt(var + Acc(eps));
      for (int64_t c = 0; c < Cg; ++c) {
        const int64_t o = g * Cg + c;
        y[b * O + o] = T((tg[c] - mean) / denom * Acc(gamma[o]) + Acc(beta[o]));
      }
    }
  }
}
