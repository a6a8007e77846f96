// Reference for 01_flash_attention: causal multi-head attention, q/k/v/o laid out [B, H, S, D].
//   s[j] = (q[b,h,i,:] . k[b,h,j,:]) / sqrt(D)      for j = 0..i (causal)
//   p[j] = exp(s[j] - max_j s) / sum_j exp(s[j] - max_j s)
//   o[b,h,i,:] = sum_j p[j] * v[b,h,j,:]
// Keys j > i are masked out entirely (their weight is exactly 0). Every sum runs over its index
// in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void flash_attention(const T* q, const T* k, const T* v, T* o, int64_t B, int64_t H, int64_t S,
                     int64_t D) {
  using Acc = kf::acc_t<T>;
  const Acc scale = Acc(1) / std::sqrt(Acc(D));
  std::vector<Acc> p(static_cast<size_t>(S)), acc(static_cast<size_t>(D));
  for (int64_t bh = 0; bh < B * H; ++bh) {
    const T* Q = q + bh * S * D;
    const T* K = k + bh * S * D;
    const T* V = v + bh * S * D;
    T* O = o + bh * S * D;
    for (int64_t i = 0; i < S; ++i) {
      Acc m = -INFINITY;
      for (int64_t j = 0; j <= i; ++j) {
        Acc s = 0;
        for (int64_t d = 0; d < D; ++d) s += Acc(Q[i * D + d]) * Acc(K[j * D + d]);
        p[j] = s * scale;
        m = p[j] > m ? p[j] : m;
      }
      Acc l = 0;
      for (int64_t j = 0; j <= i; ++j) {
        p[j] = std::exp(p[j] - m);
        l += p[j];
      }
      for (int64_t d = 0; d < D; ++d) acc[d] = 0;
      for (int64_t j = 0; j <= i; ++j)
        for (int64_t d = 0; d < D; ++d) acc[d] += p[j] * Acc(V[j * D + d]);
      for (int64_t d = 0; d < D; ++d) O[i * D + d] = T(acc[d] / l);
    }
  }
}
