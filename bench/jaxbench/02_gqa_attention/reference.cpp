// Reference for 02_gqa_attention: causal grouped-query attention, Llama layout [B, S, heads, D].
// Query head h (of Hq = Hkv * G) reads key/value head h / G (jnp.repeat of each KV head G times):
//   s[j] = (q[b,i,h,:] . k[b,j,h/G,:]) / sqrt(D)      for j = 0..i (causal)
//   o[b,i,h,:] = sum_j softmax_j(s)[j] * v[b,j,h/G,:]
// Keys j > i get weight exactly 0. Every sum runs over its index in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void gqa_attention(const T* q, const T* k, const T* v, T* o, int64_t B, int64_t S, int64_t Hkv,
                   int64_t G, int64_t D) {
  using Acc = kf::acc_t<T>;
  const int64_t Hq = Hkv * G;
  const Acc scale = Acc(1) / std::sqrt(Acc(D));
  std::vector<Acc> p(static_cast<size_t>(S)), acc(static_cast<size_t>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t hk = h / G;
      for (int64_t i = 0; i < S; ++i) {
        const T* Q = q + ((b * S + i) * Hq + h) * D;
        Acc m = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          const T* K = k + ((b * S + j) * Hkv + hk) * D;
          Acc s = 0;
          for (int64_t d = 0; d < D; ++d) s += Acc(Q[d]) * Acc(K[d]);
          p[j] = s * scale;
          m = p[j] > m ? p[j] : m;
        }
        Acc l = 0;
        for (int64_t j = 0; j <= i; ++j) {
          p[j] = std::exp(p[j] - m);
          l += p[j];
        }
        for (int64_t d = 0; d < D; ++d) acc[d] = 0;
        for (int64_t j = 0; j <= i; ++j) {
          const T* V = v + ((b * S + j) * Hkv + hk) * D;
          for (int64_t d = 0; d < D; ++d) acc[d] += p[j] * Acc(V[d]);
        }
        T* O = o + ((b * S + i) * Hq + h) * D;
        for (int64_t d = 0; d < D; ++d) O[d] = T(acc[d] / l);
      }
    }
}
