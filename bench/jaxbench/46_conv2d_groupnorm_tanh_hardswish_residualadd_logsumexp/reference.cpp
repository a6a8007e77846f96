// Reference for 46_conv2d_groupnorm_tanh_hardswish_residualadd_logsumexp (KernelBench level 2,
// problem 92):
//   xc[n,k,p,q] = conv_bias[k] + sum_{c,r,s} x[n,c,p+r,q+s] * weight[k,c,r,s]   (valid, stride 1)
//   GroupNorm(G, K) over each sample's groups of Cg = K / G channels x P x Q positions:
//   mu[n,g], var[n,g] = mean and biased variance of xc[n, g*Cg .. g*Cg+Cg-1, :, :]
//   t[n,k,p,q]  = tanh((xc - mu[n,g]) / sqrt(var[n,g] + eps) * gn_weight[k] + gn_bias[k]), g = k /
//   Cg res         = xc + t * min(max(t + 3, 0), 6) / 6                 (residual + hardswish(t))
//   y[n,0,p,q]  = log(sum_k exp(res[n,k,p,q]))                        (the max over k subtracted)
// P = H - R + 1, Q = W - S + 1. Every sum runs in ascending index order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void conv2d_groupnorm_tanh_hardswish_residualadd_logsumexp(const T* x, const T* weight,
                                                           const T* conv_bias, const T* gn_weight,
                                                           const T* gn_bias, T* y, int64_t N,
                                                           int64_t C, int64_t H, int64_t W,
                                                           int64_t K, int64_t R, int64_t S,
                                                           int64_t G, kf::acc_t<T> eps) {
  using Acc = kf::acc_t<T>;
  const int64_t P = H - R + 1, Q = W - S + 1, PQ = P * Q, Cg = K / G;
  std::vector<Acc> res(static_cast<size_t>(K * PQ));
  for (int64_t n = 0; n < N; ++n) {
    // Convolution: res[k,p,q] = xc[n,k,p,q].
    for (int64_t k = 0; k < K; ++k)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          Acc s = 0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t t = 0; t < S; ++t)
                s += Acc(x[((n * C + c) * H + p + r) * W + q + t]) *
                     Acc(weight[((k * C + c) * R + r) * S + t]);
          res[(k * P + p) * Q + q] = s + Acc(conv_bias[k]);
        }
    // GroupNorm, tanh, hardswish and the residual add, in place (each element reads only itself).
    for (int64_t g = 0; g < G; ++g) {
      Acc* v = &res[g * Cg * PQ];  // the group's Cg x P x Q values are contiguous
      const int64_t cnt = Cg * PQ;
      Acc mean = 0;
      for (int64_t e = 0; e < cnt; ++e) mean += v[e];
      mean /= Acc(cnt);
      Acc var = 0;
      for (int64_t e = 0; e < cnt; ++e) var += (v[e] - mean) * (v[e] - mean);
      var /= Acc(cnt);
      const Acc rstd = Acc(1) / std::sqrt(var + eps);
      for (int64_t e = 0; e < cnt; ++e) {
        const int64_t k = g * Cg + e / PQ;
        const Acc t = std::tanh((v[e] - mean) * rstd * Acc(gn_weight[k]) + Acc(gn_bias[k]));
        Acc r6 = t + Acc(3);
        r6 = r6 < Acc(0) ? Acc(0) : (r6 > Acc(6) ? Acc(6) : r6);
        v[e] = v[e] + t * r6 / Acc(6);
      }
    }
    // LogSumExp over the channels at each position.
    for (int64_t pq = 0; pq < PQ; ++pq) {
      Acc m = res[pq];
      for (int64_t k = 1; k < K; ++k) m = res[k * PQ + pq] > m ? res[k * PQ + pq] : m;
      Acc sum = 0;
      for (int64_t k = 0; k < K; ++k) sum += std::exp(res[k * PQ + pq] - m);
      y[n * PQ + pq] = T(m + std::log(sum));
    }
  }
}
