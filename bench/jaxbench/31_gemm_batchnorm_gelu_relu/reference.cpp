// Reference for 31_gemm_batchnorm_gelu_relu (KernelBench level 2, problem 41), BatchNorm in
// training mode (the module's default mode, which KernelBench runs: batch statistics):
//   z[b,o]  = sum_i x[b,i] * W[o,i] + bias[o]      (nn.Linear: W[O,I], bias[O])
//   mu[o]   = mean_b z[b,o];  var[o] = mean_b (z[b,o] - mu[o])^2       (biased)
//   v[b,o]  = (z[b,o] - mu[o]) / sqrt(var[o] + eps) * gamma[o] + beta[o] (nn.BatchNorm1d)
//   y[b,o]  = max(0.5 * v * (1 + erf(v / sqrt(2))), 0)                  (exact GELU, ReLU)
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void gemm_batchnorm_gelu_relu(const T* x, const T* W, const T* bias, const T* gamma,
                              const T* beta, T* y, int64_t B, int64_t I, int64_t O, T eps) {
  using Acc = kf::acc_t<T>;
  const Acc inv_sqrt2 = Acc(1) / std::sqrt(Acc(2));
  std::vector<Acc> z(static_cast<size_t>(B * O));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      z[b * O + o] = s + Acc(bias[o]);
    }
  std::vector<Acc> mean(static_cast<size_t>(O), Acc(0)), var(static_cast<size_t>(O), Acc(0));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) mean[o] += z[b * O + o];
  for (int64_t o = 0; o < O; ++o) mean[o] /= Acc(B);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      const Acc d = z[b * O + o] - mean[o];
      var[o] += d * d;
    }
  for (int64_t o = 0; o < O; ++o) var[o] /= Acc(B);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      const Acc v =
          (z[b * O + o] - mean[o]) / std::sqrt(var[o] + Acc(eps)) * Acc(gamma[o]) + Acc(beta[o]);
      const Acc g = Acc(0.5) * v * (Acc(1) + std::erf(v * inv_sqrt2));
      y[b * O + o] = T(g > Acc(0) ? g : Acc(0));
    }
}
