// Reference for 15_retnet_retention: RetNet multi-scale retention, parallel form (torchscale).
// q, k, v, o are [B, H, S, D]. Head h decays with gamma_h = 1 - 2^(-5 - h):
//   mask[i, j]  = gamma_h^(i - j) / sqrt(sum_{j' <= i} gamma_h^(i - j'))   for j <= i, else 0
//   r[i, j]     = (q[i] . k[j]) / sqrt(D) * mask[i, j]
//   o[i]        = sum_j r[i, j] v[j] / clamp(sum_j |r[i, j]|, 1, 5e4)
// gamma^(i-j) is computed as exp(log(gamma) * (i - j)), as torchscale builds its decay mask.
// Sums run over their index in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void retnet_retention(const T* q, const T* k, const T* v, T* o, int64_t B, int64_t H, int64_t S,
                      int64_t D) {
  using Acc = kf::acc_t<T>;
  const Acc scale = Acc(1) / std::sqrt(Acc(D));
  std::vector<Acc> r(static_cast<size_t>(S)), acc(static_cast<size_t>(D));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const Acc ld = std::log(Acc(1) - std::pow(Acc(2), Acc(-5 - h)));  // log(gamma_h)
      const int64_t bh = b * H + h;
      const T* Q = q + bh * S * D;
      const T* K = k + bh * S * D;
      const T* V = v + bh * S * D;
      for (int64_t i = 0; i < S; ++i) {
        Acc msum = 0;
        for (int64_t j = 0; j <= i; ++j) msum += std::exp(ld * Acc(i - j));
        const Acc mnorm = std::sqrt(msum);
        Acc l1 = 0;
        for (int64_t j = 0; j <= i; ++j) {
          Acc s = 0;
          for (int64_t d = 0; d < D; ++d) s += Acc(Q[i * D + d]) * Acc(K[j * D + d]);
          r[j] = s * scale * (std::exp(ld * Acc(i - j)) / mnorm);
          l1 += std::fabs(r[j]);
        }
        const Acc den = l1 < Acc(1) ? Acc(1) : (l1 > Acc(5e4) ? Acc(5e4) : l1);
        for (int64_t d = 0; d < D; ++d) acc[d] = 0;
        for (int64_t j = 0; j <= i; ++j)
          for (int64_t d = 0; d < D; ++d) acc[d] += r[j] * Acc(V[j * D + d]);
        for (int64_t d = 0; d < D; ++d) o[(bh * S + i) * D + d] = T(acc[d] / den);
      }
    }
}
