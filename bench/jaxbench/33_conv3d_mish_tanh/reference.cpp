// Reference for 33_conv3d_mish_tanh (KernelBench level 2, problem 47):
//   z[n,k,d,h,w] = conv_bias[k] + sum_{c,a,b,e} x[n,c,d+a,h+b,w+e] * weight[k,c,a,b,e]  (nn.Conv3d)
//   y = tanh(mish(z)),  mish(v) = v * tanh(log(1 + exp(v)))
// A valid (no padding), stride-1 cross-correlation; OD = D-T+1, OH = H-R+1, OW = W-S+1.
// The convolution loops run (c, a, b, e) outside the spatial loops so the innermost loop is
// contiguous; every z element is still summed over (c, a, b, e) in lexicographic order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void conv3d_mish_tanh(const T* x, const T* weight, const T* conv_bias, T* y, int64_t N,
                      int64_t C, int64_t D, int64_t H, int64_t W, int64_t K, int64_t T_,
                      int64_t R, int64_t S) {
  using Acc = kf::acc_t<T>;
  const int64_t OD = D - T_ + 1, OH = H - R + 1, OW = W - S + 1;
  const int64_t vol = OD * OH * OW;
  std::vector<Acc> z(static_cast<size_t>(vol));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t i = 0; i < vol; ++i) z[i] = 0;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t a = 0; a < T_; ++a)
          for (int64_t b = 0; b < R; ++b)
            for (int64_t e = 0; e < S; ++e) {
              const Acc wv = Acc(weight[(((k * C + c) * T_ + a) * R + b) * S + e]);
              for (int64_t d = 0; d < OD; ++d)
                for (int64_t h = 0; h < OH; ++h) {
                  const T* xr = x + (((n * C + c) * D + d + a) * H + h + b) * W + e;
                  Acc* zr = z.data() + (d * OH + h) * OW;
                  for (int64_t w = 0; w < OW; ++w) zr[w] += Acc(xr[w]) * wv;
                }
            }
      T* yk = y + (n * K + k) * vol;
      for (int64_t i = 0; i < vol; ++i) {
        const Acc v = z[i] + Acc(conv_bias[k]);
        yk[i] = T(std::tanh(v * std::tanh(std::log1p(std::exp(v)))));
      }
    }
}
