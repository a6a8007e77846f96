// Reference for 48_matmul_batchnorm_biasadd_divide_swish (KernelBench level 2, problem 97),
// BatchNorm1d in training mode (batch statistics):
//   z[b,o] = sum_i x[b,i] * W[o,i] + lin_bias[o]                    (nn.Linear: W[O,I])
//   mu[o]  = mean_b z[b,o],  var[o] = mean_b (z[b,o] - mu[o])^2      (biased, over the batch)
//   v[b,o] = ((z[b,o] - mu[o]) / sqrt(var[o] + eps) * bn_weight[o] + bn_bias[o] + bias[0])
//            / divide_value
//   y[b,o] = v * sigmoid(v),  sigmoid(t) = 1 / (1 + exp(-t))
// Each dot product and batch sum runs in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void matmul_batchnorm_biasadd_divide_swish(const T* x, const T* W, const T* lin_bias,
                                           const T* bn_weight, const T* bn_bias, const T* bias,
                                           T* y, int64_t B, int64_t I, int64_t O, kf::acc_t<T> eps,
                                           kf::acc_t<T> divide_value) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> z(static_cast<size_t>(B * O));
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
    const Acc rstd = Acc(1) / std::sqrt(var + eps);
    for (int64_t b = 0; b < B; ++b) {
      const Acc n = (z[b * O + o] - mean) * rstd * Acc(bn_weight[o]) + Acc(bn_bias[o]);
      const Acc v = (n + Acc(bias[0])) / divide_value;
      y[b * O + o] = T(v * (Acc(1) / (Acc(1) + std::exp(-v))));
    }
  }
}
