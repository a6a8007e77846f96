// Reference for 43_gemm_batchnorm_scaling_softmax (KernelBench level 2, problem 84), BatchNorm1d
// in training mode (batch statistics):
//   z[b,o]  = sum_i x[b,i] * W[o,i] + lin_bias[o]                 (nn.Linear: W[O,I])
//   mu[o]   = mean_b z[b,o],  var[o] = mean_b (z[b,o] - mu[o])^2    (biased, over the batch)
//   s[b,o]  = scale[0] * ((z[b,o] - mu[o]) / sqrt(var[o] + eps) * bn_weight[o] + bn_bias[o])
//   y[b,:]  = softmax(s[b,:])                                     (over O, the row max subtracted)
// Each dot product, batch sum and row sum runs in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void gemm_batchnorm_scaling_softmax(const T* x, const T* W, const T* lin_bias, const T* bn_weight,
                                    const T* bn_bias, const T* scale, T* y, int64_t B, int64_t I,
                                    int64_t O, kf::acc_t<T> eps) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> z(static_cast<size_t>(B * O)), mu(static_cast<size_t>(O)),
      rstd(static_cast<size_t>(O));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t o = 0; o < O; ++o) {
      Acc s = 0;
      for (int64_t i = 0; i < I; ++i) s += Acc(x[b * I + i]) * Acc(W[o * I + i]);
      z[b * O + o] = s + Acc(lin_bias[o]);
    }
  for (int64_t o = 0; o < O; ++o) {
    Acc mean = 0;
    for (int64_t b = 0; b < B; ++b) mean += z[b * O + o];
    mean /= Acc(B);
    Acc var = 0;
    for (int64_t b = 0; b < B; ++b) var += (z[b * O + o] - mean) * (z[b * O + o] - mean);
    var /= Acc(B);
    mu[o] = mean;
    rstd[o] = Acc(1) / std::sqrt(var + eps);
  }
  const Acc sc = Acc(scale[0]);
  for (int64_t b = 0; b < B; ++b) {
    Acc* row = &z[b * O];
    for (int64_t o = 0; o < O; ++o)
      row[o] = sc * ((row[o] - mu[o]) * rstd[o] * Acc(bn_weight[o]) + Acc(bn_bias[o]));
    Acc m = row[0];
    for (int64_t o = 1; o < O; ++o) m = row[o] > m ? row[o] : m;
    Acc sum = 0;
    for (int64_t o = 0; o < O; ++o) {
      row[o] = std::exp(row[o] - m);
      sum += row[o];
    }
    for (int64_t o = 0; o < O; ++o) y[b * O + o] = T(row[o] / sum);
  }
}
