// Reference for 39_conv2d_gelu_globalavgpool (KernelBench level 2, problem 67):
//   z[n,k,p,q] = conv_bias[k] + sum_{c,r,s} x[n,c,p+r,q+s] * weight[k,c,r,s]
//   y[n,k]     = (1 / (P*Q)) * sum_{p,q} gelu(z[n,k,p,q]),  gelu(v) = 0.5 v (1 + erf(v / sqrt(2)))
// A valid (no padding), stride-1 cross-correlation; P = H - R + 1, Q = W - S + 1. The pooled sum
// runs over p, then q, in ascending order.
#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void conv2d_gelu_globalavgpool(const T* x, const T* weight, const T* conv_bias, T* y, int64_t N,
                               int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S) {
  using Acc = kf::acc_t<T>;
  const int64_t P = H - R + 1, Q = W - S + 1;
  const Acc inv_sqrt2 = Acc(1) / std::sqrt(Acc(2));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      Acc pooled = 0;
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          Acc s = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t t = 0; t < S; ++t)
                s += Acc(x[((n * C + c) * H + p + r) * W + q + t]) *
                     Acc(weight[((k * C + c) * R + r) * S + t]);
          const Acc z = s + Acc(conv_bias[k]);
          pooled += Acc(0.5) * z * (Acc(1) + std::erf(z * inv_sqrt2));
        }
      y[n * K + k] = T(pooled / Acc(P * Q));
    }
}
