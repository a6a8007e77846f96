// Reference for 34_conv2d_activation_batchnorm (KernelBench level 2, problem 52), BatchNorm in
// training mode (the module's default mode, which KernelBench runs: batch statistics):
//   z[n,k,p,q] = conv_bias[k] + sum_{c,r,s} x[n,c,p+r,q+s] * weight[k,c,r,s]   (nn.Conv2d)
//   a = tanh(softplus(z)) * z,  softplus(v) = v > 20 ? v : log(1 + exp(v))    (F.softplus)
//   mu[k] = mean_{n,p,q} a;  var[k] = mean_{n,p,q} (a - mu[k])^2              (biased)
//   y = (a - mu[k]) / sqrt(var[k] + eps) * gamma[k] + beta[k]                  (nn.BatchNorm2d)
// A valid (no padding), stride-1 cross-correlation; P = H - R + 1, Q = W - S + 1.
// The channel statistics are summed row by row (a partial sum over q for each (n, p), then the
// sum of the row partials) so that f32 rounding does not grow with the N*P*Q values.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void conv2d_activation_batchnorm(const T* x, const T* weight, const T* conv_bias, const T* gamma,
                                 const T* beta, T* y, int64_t N, int64_t C, int64_t H, int64_t W,
                                 int64_t K, int64_t R, int64_t S, T eps) {
  using Acc = kf::acc_t<T>;
  const int64_t P = H - R + 1, Q = W - S + 1;
  std::vector<Acc> a(static_cast<size_t>(N * K * P * Q));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          Acc s = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t t = 0; t < S; ++t)
                s += Acc(x[((n * C + c) * H + p + r) * W + q + t]) *
                     Acc(weight[((k * C + c) * R + r) * S + t]);
          const Acc z = s + Acc(conv_bias[k]);
          const Acc sp = z > Acc(20) ? z : std::log1p(std::exp(z));
          a[((n * K + k) * P + p) * Q + q] = std::tanh(sp) * z;
        }
  const Acc cnt = Acc(N * P * Q);
  for (int64_t k = 0; k < K; ++k) {
    Acc mean = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t p = 0; p < P; ++p) {
        const Acc* ar = a.data() + ((n * K + k) * P + p) * Q;
        Acc part = 0;
        for (int64_t q = 0; q < Q; ++q) part += ar[q];
        mean += part;
      }
    mean /= cnt;
    Acc var = 0;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t p = 0; p < P; ++p) {
        const Acc* ar = a.data() + ((n * K + k) * P + p) * Q;
        Acc part = 0;
        for (int64_t q = 0; q < Q; ++q) part += (ar[q] - mean) * (ar[q] - mean);
        var += part;
      }
    var /= cnt;
    const Acc denom = std::sqrt(var + Acc(eps));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < P * Q; ++i) {
        const int64_t idx = (n * K + k) * P * Q + i;
        y[idx] = T((a[idx] - mean) / denom * Acc(gamma[k]) + Acc(beta[k]));
      }
  }
}
