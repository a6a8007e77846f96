// Reference for 10_sparse_moe: Mixtral-style sparse MoE layer, top-2 of NE SwiGLU experts.
//   e1 = argmax_e logits[t, e], e2 = argmax_{e != e1} logits[t, e]   (ties: lowest index)
//   (w_e1, w_e2) = softmax(logits[t, e1], logits[t, e2])
//   expert_e(x) = (silu(x @ w1[e]) * (x @ w3[e])) @ w2[e],   silu(z) = z / (1 + exp(-z))
//   y[t] = w_e1 * expert_e1(x[t]) + w_e2 * expert_e2(x[t])
// Only the two chosen experts run for a token. Each matmul sums over its inner index in ascending
// order (k-outer loops with a row accumulator).
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void sparse_moe(const T* x, const T* router_logits, const T* w1, const T* w3, const T* w2, T* y,
                int64_t Ntok, int64_t E, int64_t F, int64_t NE) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> g(static_cast<size_t>(F)), u(static_cast<size_t>(F));
  std::vector<Acc> out(static_cast<size_t>(E)), acc(static_cast<size_t>(E));
  for (int64_t t = 0; t < Ntok; ++t) {
    const T* lg = router_logits + t * NE;
    int64_t e1 = 0;
    for (int64_t e = 1; e < NE; ++e)
      if (Acc(lg[e]) > Acc(lg[e1])) e1 = e;
    int64_t e2 = e1 == 0 ? 1 : 0;
    for (int64_t e = 0; e < NE; ++e)
      if (e != e1 && Acc(lg[e]) > Acc(lg[e2])) e2 = e;
    // softmax over the two selected logits (the max is logits[e1]).
    const Acc z2 = std::exp(Acc(lg[e2]) - Acc(lg[e1]));
    const Acc wsel[2] = {Acc(1) / (Acc(1) + z2), z2 / (Acc(1) + z2)};
    const int64_t sel[2] = {e1, e2};
    const T* xt = x + t * E;
    for (int64_t d = 0; d < E; ++d) acc[d] = 0;
    for (int k = 0; k < 2; ++k) {
      const int64_t e = sel[k];
      const T* W1 = w1 + e * E * F;
      const T* W3 = w3 + e * E * F;
      const T* W2 = w2 + e * F * E;
      for (int64_t f = 0; f < F; ++f) g[f] = 0, u[f] = 0;
      for (int64_t d = 0; d < E; ++d) {
        const Acc xv = Acc(xt[d]);
        for (int64_t f = 0; f < F; ++f) g[f] += xv * Acc(W1[d * F + f]);
        for (int64_t f = 0; f < F; ++f) u[f] += xv * Acc(W3[d * F + f]);
      }
      for (int64_t f = 0; f < F; ++f) g[f] = g[f] / (Acc(1) + std::exp(-g[f])) * u[f];
      for (int64_t d = 0; d < E; ++d) out[d] = 0;
      for (int64_t f = 0; f < F; ++f) {
        const Acc hv = g[f];
        for (int64_t d = 0; d < E; ++d) out[d] += hv * Acc(W2[f * E + d]);
      }
      for (int64_t d = 0; d < E; ++d) acc[d] += wsel[k] * out[d];
    }
    for (int64_t d = 0; d < E; ++d) y[t * E + d] = T(acc[d]);
  }
}
