// Reference for 13_cross_entropy: LM-head projection + log-softmax + NLL, per token.
//   logits[t, :] = h[t, :] @ W                               (W [Hd, V])
//   loss[t] = log(sum_v exp(logits[t, v] - m_t)) + m_t - logits[t, labels[t]],  m_t = max_v logits
// The projection uses a k-outer loop with a row accumulator (each logit summed over d in
// ascending order); the softmax sum runs over v in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void cross_entropy(const T* h, const T* W, const int32_t* labels, T* loss, int64_t Ntok,
                   int64_t Hd, int64_t V) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> lg(static_cast<size_t>(V));
  for (int64_t t = 0; t < Ntok; ++t) {
    for (int64_t v = 0; v < V; ++v) lg[v] = 0;
    for (int64_t d = 0; d < Hd; ++d) {
      const Acc a = Acc(h[t * Hd + d]);
      for (int64_t v = 0; v < V; ++v) lg[v] += a * Acc(W[d * V + v]);
    }
    Acc m = lg[0];
    for (int64_t v = 1; v < V; ++v) m = lg[v] > m ? lg[v] : m;
    Acc s = 0;
    for (int64_t v = 0; v < V; ++v) s += std::exp(lg[v] - m);
    loss[t] = T(std::log(s) + m - lg[labels[t]]);
  }
}
