// Reference for 18_conv2d_relu_biasadd (KernelBench level 2, problem 1):
//   z[n,k,p,q] = conv_bias[k] + sum_{c,r,s} x[n,c,p+r,q+s] * weight[k,c,r,s]
//   y[n,k,p,q] = max(z[n,k,p,q], 0) + bias[k]
// A valid (no padding), stride-1 cross-correlation; P = H - R + 1, Q = W - S + 1.
#include <kforge/kernel.h>

template <typename T>
void conv2d_relu_biasadd(const T* x, const T* weight, const T* conv_bias, const T* bias, T* y,
                         int64_t N, int64_t C, int64_t H, int64_t W, int64_t K, int64_t R,
                         int64_t S) {
  using Acc = kf::acc_t<T>;
  const int64_t P = H - R + 1, Q = W - S + 1;
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
          Acc z = s + Acc(conv_bias[k]);
          if (z < Acc(0)) z = Acc(0);
          y[((n * K + k) * P + p) * Q + q] = T(z + Acc(bias[k]));
        }
}
