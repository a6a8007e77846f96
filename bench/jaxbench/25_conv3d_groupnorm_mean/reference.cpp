// Reference for 25_conv3d_groupnorm_mean (KernelBench level 2, problem 23):
//   z[n,k,d,h,w] = conv_bias[k] + sum_{c,a,b,e} x[n,c,d+a,h+b,w+e] * weight[k,c,a,b,e]  (nn.Conv3d)
//   group g = k / Cg holds channels g*Cg .. g*Cg+Cg-1 (K = G * Cg)             (nn.GroupNorm)
//   mu[n,g]  = mean over the group's channels and all of OD x OH x OW of z
//   var[n,g] = mean of (z - mu[n,g])^2 over the same elements                  (biased)
//   v[n,k,d,h,w] = (z - mu[n,g]) / sqrt(var[n,g] + eps) * gamma[k] + beta[k]
//   y[n] = mean over k, d, h, w of v                                           (x.mean([1,2,3,4]))
// A valid (no padding), stride-1 cross-correlation; OD = D-T+1, OH = H-R+1, OW = W-S+1.
// The convolution loops run (c, a, b, e) outside the spatial loops so the innermost loop is
// contiguous; every z element is still summed over (c, a, b, e) in lexicographic order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void conv3d_groupnorm_mean(const T* x, const T* weight, const T* conv_bias, const T* gamma,
                           const T* beta, T* y, int64_t N, int64_t C, int64_t D, int64_t H,
                           int64_t W, int64_t G, int64_t Cg, int64_t T_, int64_t R, int64_t S,
                           T eps) {
  using Acc = kf::acc_t<T>;
  const int64_t K = G * Cg, OD = D - T_ + 1, OH = H - R + 1, OW = W - S + 1;
  const int64_t vol = OD * OH * OW;
  std::vector<Acc> z(static_cast<size_t>(K * vol));
  for (int64_t n = 0; n < N; ++n) {
    // Convolution into z[k, d, h, w].
    for (int64_t k = 0; k < K; ++k) {
      Acc* zk = z.data() + k * vol;
      for (int64_t i = 0; i < vol; ++i) zk[i] = 0;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t a = 0; a < T_; ++a)
          for (int64_t b = 0; b < R; ++b)
            for (int64_t e = 0; e < S; ++e) {
              const Acc wv = Acc(weight[(((k * C + c) * T_ + a) * R + b) * S + e]);
              for (int64_t d = 0; d < OD; ++d)
                for (int64_t h = 0; h < OH; ++h) {
                  const T* xr = x + (((n * C + c) * D + d + a) * H + h + b) * W + e;
                  Acc* zr = zk + (d * OH + h) * OW;
                  for (int64_t w = 0; w < OW; ++w) zr[w] += Acc(xr[w]) * wv;
                }
            }
      for (int64_t i = 0; i < vol; ++i) zk[i] += Acc(conv_bias[k]);
    }
    // Group norm, then the mean of everything. Every long sum is taken row by row (a partial
    // sum over w for each (k, d, h), then the sum of the row partials) so that f32 rounding does
    // not grow with the ~1e5 values of a group.
    const int64_t rows = OD * OH;
    Acc total = 0;
    for (int64_t g = 0; g < G; ++g) {
      const Acc* zg = z.data() + g * Cg * vol;
      const int64_t cnt = Cg * vol;
      Acc mean = 0;
      for (int64_t r = 0; r < Cg * rows; ++r) {
        Acc part = 0;
        for (int64_t w = 0; w < OW; ++w) part += zg[r * OW + w];
        mean += part;
      }
      mean /= Acc(cnt);
      Acc var = 0;
      for (int64_t r = 0; r < Cg * rows; ++r) {
        Acc part = 0;
        for (int64_t w = 0; w < OW; ++w) part += (zg[r * OW + w] - mean) * (zg[r * OW + w] - mean);
        var += part;
      }
      var /= Acc(cnt);
      const Acc denom = std::sqrt(var + Acc(eps));
      for (int64_t c = 0; c < Cg; ++c) {
        const int64_t k = g * Cg + c;
        Acc chan = 0;
        for (int64_t r = 0; r < rows; ++r) {
          Acc part = 0;
          for (int64_t w = 0; w < OW; ++w)
            part += (zg[(c * rows + r) * OW + w] - mean) / denom * Acc(gamma[k]) + Acc(beta[k]);
          chan += part;
        }
        total += chan;
      }
    }
    y[n] = T(total / Acc(K * vol));
  }
}
