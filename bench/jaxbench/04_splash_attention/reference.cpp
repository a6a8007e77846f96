// Reference for 04_splash_attention: block-sparse causal GQA attention (the mask that Splash
// attention skips block by block). q [Hq,S,D], k/v [Hkv,S,D], Hq = Hkv * G, head h reads KV head
// h / G. Query i may attend key j when
//   j <= i  and  ( i/BLK - j/BLK < NW      (local window: its own block and NW-1 blocks before)
//                  or j/BLK < NG )          (global blocks at the start of the sequence)
// s[j] = q[h,i,:] . k[h/G,j,:]  (no scale: splash callers pre-scale q), o = softmax over the
// allowed keys @ v. Masked keys get weight exactly 0. Sums run over their index in ascending
// order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void splash_attention(const T* q, const T* k, const T* v, T* o, int64_t Hkv, int64_t G, int64_t S,
                      int64_t D, int64_t BLK, int64_t NW, int64_t NG) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> p(static_cast<size_t>(S)), acc(static_cast<size_t>(D));
  for (int64_t h = 0; h < Hkv * G; ++h) {
    const T* K = k + (h / G) * S * D;
    const T* V = v + (h / G) * S * D;
    for (int64_t i = 0; i < S; ++i) {
      const T* Q = q + (h * S + i) * D;
      auto allowed = [&](int64_t j) { return i / BLK - j / BLK < NW || j / BLK < NG; };
      Acc m = -INFINITY;
      for (int64_t j = 0; j <= i; ++j) {
        if (!allowed(j)) continue;
        Acc s = 0;
        for (int64_t d = 0; d < D; ++d) s += Acc(Q[d]) * Acc(K[j * D + d]);
        p[j] = s;
        m = s > m ? s : m;
      }
      Acc l = 0;
      for (int64_t j = 0; j <= i; ++j) {
        if (!allowed(j)) continue;
        p[j] = std::exp(p[j] - m);
        l += p[j];
      }
      for (int64_t d = 0; d < D; ++d) acc[d] = 0;
      for (int64_t j = 0; j <= i; ++j) {
        if (!allowed(j)) continue;
        for (int64_t d = 0; d < D; ++d) acc[d] += p[j] * Acc(V[j * D + d]);
      }
      for (int64_t d = 0; d < D; ++d) o[(h * S + i) * D + d] = T(acc[d] / l);
    }
  }
}
