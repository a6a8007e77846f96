// Reference for 05_flex_attention: attention with a score modifier and a mask, as FlexAttention
// composes them — ALiBi bias plus a causal sliding window. q/k/v/o are [B, H, S, D].
//   score(i, j) = (q[b,h,i,:] . k[b,h,j,:]) / sqrt(D) + slope[h] * (j - i)
//   slope[h]    = 2^(-8 (h + 1) / H)                           (ALiBi's geometric slopes)
//   allowed     = i - W < j <= i                               (window of W keys, self included)
//   o[b,h,i,:]  = softmax over allowed j of score(i, j), applied to v[b,h,j,:]
// Masked keys get weight exactly 0. Sums run over their index in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void flex_attention(const T* q, const T* k, const T* v, T* o, int64_t B, int64_t H, int64_t S,
                    int64_t D, int64_t W) {
  using Acc = kf::acc_t<T>;
  const Acc scale = Acc(1) / std::sqrt(Acc(D));
  std::vector<Acc> p(static_cast<size_t>(S)), acc(static_cast<size_t>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const Acc slope = std::pow(Acc(2), Acc(-8) * Acc(h + 1) / Acc(H));
      const int64_t bh = b * H + h;
      const T* Q = q + bh * S * D;
      const T* K = k + bh * S * D;
      const T* V = v + bh * S * D;
      for (int64_t i = 0; i < S; ++i) {
        const int64_t j0 = i - W + 1 > 0 ? i - W + 1 : 0;
        Acc m = -INFINITY;
        for (int64_t j = j0; j <= i; ++j) {
          Acc s = 0;
          for (int64_t d = 0; d < D; ++d) s += Acc(Q[i * D + d]) * Acc(K[j * D + d]);
          p[j] = s * scale + slope * Acc(j - i);
          m = p[j] > m ? p[j] : m;
        }
        Acc l = 0;
        for (int64_t j = j0; j <= i; ++j) {
          p[j] = std::exp(p[j] - m);
          l += p[j];
        }
        for (int64_t d = 0; d < D; ++d) acc[d] = 0;
        for (int64_t j = j0; j <= i; ++j)
          for (int64_t d = 0; d < D; ++d) acc[d] += p[j] * Acc(V[j * D + d]);
        for (int64_t d = 0; d < D; ++d) o[(bh * S + i) * D + d] = T(acc[d] / l);
      }
    }
}
