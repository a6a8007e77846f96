// Reference for 06_paged_attention: single-token decode attention over a paged KV cache (GQA).
// Sequence n has lens[n] cached tokens; token t lives in page page_table[n, t / PS], slot t % PS
// of k_pages / v_pages [NP, PS, Hkv, D]. Query head h (of Hq = Hkv * G) reads KV head h / G:
//   s[t] = q[n,h,:] . k_pages[page_table[n, t/PS], t%PS, h/G, :] / sqrt(D),  t = 0..lens[n]-1
//   o[n,h,:] = sum_t softmax(s)[t] * v_pages[page_table[n, t/PS], t%PS, h/G, :]
// Sums run over their index in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void paged_attention(const T* q, const T* k_pages, const T* v_pages, const int32_t* lens,
                     const int32_t* page_table, T* o, int64_t NS, int64_t Hkv, int64_t G,
                     int64_t D, int64_t PS, int64_t MAXP, int64_t NP) {
  using Acc = kf::acc_t<T>;
  (void)NP;
  const int64_t Hq = Hkv * G;
  const Acc scale = Acc(1) / std::sqrt(Acc(D));
  std::vector<Acc> p(static_cast<size_t>(MAXP * PS)), acc(static_cast<size_t>(D));
  auto slot = [&](int64_t n, int64_t t, int64_t hk) {  // offset of token t's row for KV head hk
    const int64_t page = page_table[n * MAXP + t / PS];
    return ((page * PS + t % PS) * Hkv + hk) * D;
  };
  for (int64_t n = 0; n < NS; ++n) {
    const int64_t len = lens[n];
    for (int64_t h = 0; h < Hq; ++h) {
      const T* Q = q + (n * Hq + h) * D;
      Acc m = -INFINITY;
      for (int64_t t = 0; t < len; ++t) {
        const T* K = k_pages + slot(n, t, h / G);
        Acc s = 0;
        for (int64_t d = 0; d < D; ++d) s += Acc(Q[d]) * Acc(K[d]);
        p[t] = s * scale;
        m = p[t] > m ? p[t] : m;
      }
      Acc l = 0;
      for (int64_t t = 0; t < len; ++t) {
        p[t] = std::exp(p[t] - m);
        l += p[t];
      }
      for (int64_t d = 0; d < D; ++d) acc[d] = 0;
      for (int64_t t = 0; t < len; ++t) {
        const T* V = v_pages + slot(n, t, h / G);
        for (int64_t d = 0; d < D; ++d) acc[d] += p[t] * Acc(V[d]);
      }
      for (int64_t d = 0; d < D; ++d) o[(n * Hq + h) * D + d] = T(acc[d] / l);
    }
  }
}
