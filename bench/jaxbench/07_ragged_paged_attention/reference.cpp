// Reference for 07_ragged_paged_attention: one serving step over a paged KV cache with a mixed
// batch — ND decode sequences (one query token each) followed by NPF prefill chunks.
//   token rows: row n < ND is decode sequence n; prefill chunk p owns rows
//               ND + cu_prefill[p] .. ND + cu_prefill[p+1] - 1 (an empty chunk owns none).
//   sequence n = (decode n) or (ND + p); its q_len new tokens follow ctx_lens[n] cached ones, so
//   kv_len = ctx_lens[n] + q_len and the r-th new token sits at position ctx_lens[n] + r.
//   KV token t of sequence n: page page_indices[n, t / PS], slot t % PS of
//   kv_pages [NP, PS, 2 * Hkv, D]; K of KV head g is combined head 2g, V is 2g + 1.
//   o[row, h, :] = softmax_t(q[row,h,:] . K[t, h/G, :] / sqrt(D), t <= position) @ V[:, h/G, :]
// Sums run over their index in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void ragged_paged_attention(const T* q, const T* kv_pages, const int32_t* ctx_lens,
                            const int32_t* cu_prefill, const int32_t* page_indices, T* o,
                            int64_t ND, int64_t NPF, int64_t TP, int64_t Hkv, int64_t G, int64_t D,
                            int64_t PS, int64_t MAXCTX, int64_t NP) {
  using Acc = kf::acc_t<T>;
  (void)TP;
  (void)NP;
  const int64_t Hq = Hkv * G;
  const int64_t MAXP = (MAXCTX + TP + 1 + PS - 1) / PS;
  const Acc scale = Acc(1) / std::sqrt(Acc(D));
  std::vector<Acc> p(static_cast<size_t>(MAXP * PS)), acc(static_cast<size_t>(D));
  auto row_of = [&](int64_t n, int64_t t, int64_t comb) {  // offset of token t, combined head
    const int64_t page = page_indices[n * MAXP + t / PS];
    return ((page * PS + t % PS) * 2 * Hkv + comb) * D;
  };
  for (int64_t n = 0; n < ND + NPF; ++n) {
    const int64_t first = n < ND ? n : ND + cu_prefill[n - ND];
    const int64_t qlen = n < ND ? 1 : cu_prefill[n - ND + 1] - cu_prefill[n - ND];
    const int64_t ctx = ctx_lens[n];
    for (int64_t r = 0; r < qlen; ++r) {
      const int64_t row = first + r, pos = ctx + r;  // attends keys 0..pos
      for (int64_t h = 0; h < Hq; ++h) {
        const T* Q = q + (row * Hq + h) * D;
        Acc m = -INFINITY;
        for (int64_t t = 0; t <= pos; ++t) {
          const T* K = kv_pages + row_of(n, t, 2 * (h / G));
          Acc s = 0;
          for (int64_t d = 0; d < D; ++d) s += Acc(Q[d]) * Acc(K[d]);
          p[t] = s * scale;
          m = p[t] > m ? p[t] : m;
        }
        Acc l = 0;
        for (int64_t t = 0; t <= pos; ++t) {
          p[t] = std::exp(p[t] - m);
          l += p[t];
        }
        for (int64_t d = 0; d < D; ++d) acc[d] = 0;
        for (int64_t t = 0; t <= pos; ++t) {
          const T* V = kv_pages + row_of(n, t, 2 * (h / G) + 1);
          for (int64_t d = 0; d < D; ++d) acc[d] += p[t] * Acc(V[d]);
        }
        for (int64_t d = 0; d < D; ++d) o[(row * Hq + h) * D + d] = T(acc[d] / l);
      }
    }
  }
}
