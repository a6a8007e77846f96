// Reference for 22_conv2d_instancenorm_divide (KernelBench level 2, problem 17):
//   z[n,k,p,q] = conv_bias[k] + sum_{c,r,s} x[n,c,p+r,q+s] * weight[k,c,r,s]   (nn.Conv2d)
//   mu[n,k]    = mean_{p,q} z[n,k,p,q]
//   var[n,k]   = mean_{p,q} (z[n,k,p,q] - mu[n,k])^2                         (biased)
//   y[n,k,p,q] = (z[n,k,p,q] - mu[n,k]) / sqrt(var[n,k] + eps) / divide_by  (nn.InstanceNorm2d)
// A valid (no padding), stride-1 cross-correlation; P = H - R + 1, Q = W - S + 1.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void conv2d_instancenorm_divide(const T* x, const T* weight, const T* conv_bias, T* y, int64_t N,
                                int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                                T eps, T divide_by) {
  using Acc = kf::acc_t<T>;
  const int64_t P = H - R + 1, Q = W - S + 1;
  std::vector<Acc> z(static_cast<size_t>(P * Q));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          Acc s = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t t = 0; t < S; ++t)
                s += Acc(x[((n * C + c) * H + p + r) * W + q + t]) *
                     Acc(weight[((k * C + c) * R + r) * S + t]);
          z[p * Q + q] = s + Acc(conv_bias[k]);
        }
      Acc mean = 0;
      for (int64_t i = 0; i < P * Q; ++i) mean += z[i];
      mean /= Acc(P * Q);
      Acc var = 0;
      for (int64_t i = 0; i < P * Q; ++i) var += (z[i] - mean) * (z[i] - mean);
      var /= Acc(P * Q);
      const Acc denom = std::sqrt(var + Acc(eps));
      for (int64_t i = 0; i < P * Q; ++i)
        y[(n * K + k) * P * Q + i] = T((z[i] - mean) / denom / Acc(divide_by));
    }
}
