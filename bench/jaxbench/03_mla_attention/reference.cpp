// Reference for 03_mla_attention: DeepSeek-V3 multi-head latent attention (MLA), prefill, causal.
//   cq  = rmsnorm(x @ wq_a) * q_norm                 x [B,S,E], wq_a [E,QL]        -> [B,S,QL]
//   qn  = cq @ wq_nope, qp = cq @ wq_rope            [QL,H,DN], [QL,H,DR]          -> per head
//   ckv = rmsnorm(x @ wkv_a) * kv_norm               wkv_a [E,KL]                  -> [B,S,KL]
//   kp  = x @ wk_rope                                wk_rope [E,DR] (one rope key shared by heads)
//   kn  = ckv @ wk_nope, v = ckv @ wv                [KL,H,DN], [KL,H,DV]
//   qr, kr = rope(qp), rope(kp): interleaved pairs (2i, 2i+1) rotated by (cos, sin)[s, i]
//   s[h,i,j] = (qn[i,h,:] . kn[j,h,:] + qr[i,h,:] . kr[j,:]) / sqrt(DN + DR), causal softmax over j
//   att[i,h,:] = sum_j p[h,i,j] v[j,h,:];  y = att @ wo              wo [H,DV,E]   -> [B,S,E]
// rmsnorm(z) = z / sqrt(mean(z^2) + eps). Every sum runs over its index in ascending order; the
// matmuls use i-k-j loops with a row accumulator (same order as the textbook loop).
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

namespace mla_ref {

// C[M,N] = A[M,K] @ W[K,N], all row-major; A may be given in T or Acc.
template <typename Acc, typename TA, typename TW>
void matmul(const TA* A, const TW* W, Acc* C, int64_t M, int64_t K, int64_t N) {
  for (int64_t i = 0; i < M; ++i) {
    Acc* c = C + i * N;
    for (int64_t n = 0; n < N; ++n) c[n] = 0;
    for (int64_t kk = 0; kk < K; ++kk) {
      const Acc a = Acc(A[i * K + kk]);
      for (int64_t n = 0; n < N; ++n) c[n] += a * Acc(W[kk * N + n]);
    }
  }
}

// In place: each row of z[M,N] -> z / sqrt(mean(z^2) + eps) * w.
template <typename Acc, typename T>
void rmsnorm(Acc* z, const T* w, int64_t M, int64_t N, Acc eps) {
  for (int64_t i = 0; i < M; ++i) {
    Acc* r = z + i * N;
    Acc ss = 0;
    for (int64_t n = 0; n < N; ++n) ss += r[n] * r[n];
    const Acc rms = std::sqrt(ss / Acc(N) + eps);
    for (int64_t n = 0; n < N; ++n) r[n] = r[n] / rms * Acc(w[n]);
  }
}

// In place, interleaved-pair rotary embedding of z[DR] at position s.
template <typename Acc, typename T>
void rope(Acc* z, const T* cosv, const T* sinv, int64_t s, int64_t DR2) {
  for (int64_t i = 0; i < DR2; ++i) {
    const Acc c = Acc(cosv[s * DR2 + i]), sn = Acc(sinv[s * DR2 + i]);
    const Acc x1 = z[2 * i], x2 = z[2 * i + 1];
    z[2 * i] = x1 * c - x2 * sn;
    z[2 * i + 1] = x1 * sn + x2 * c;
  }
}

}  // namespace mla_ref

template <typename T>
void mla_attention(const T* x, const T* wq_a, const T* q_norm, const T* wq_nope, const T* wq_rope,
                   const T* wkv_a, const T* kv_norm, const T* wk_rope, const T* wk_nope,
                   const T* wv, const T* wo, const T* rope_cos, const T* rope_sin, T* y,
                   int64_t B, int64_t S, int64_t E, int64_t H, int64_t QL, int64_t KL, int64_t DN,
                   int64_t DR2, int64_t DV, kf::acc_t<T> eps) {
  using Acc = kf::acc_t<T>;
  using namespace mla_ref;
  const int64_t DR = 2 * DR2;
  const Acc scale = Acc(1) / std::sqrt(Acc(DN + DR));
  const size_t BS = static_cast<size_t>(B * S);
  std::vector<Acc> cq(BS * QL), qn(BS * H * DN), qr(BS * H * DR), ckv(BS * KL), kr(BS * DR);
  std::vector<Acc> kn(BS * H * DN), vv(BS * H * DV), att(BS * H * DV), p(static_cast<size_t>(S));
  const int64_t M = B * S;
  // Low-rank query path.
  matmul(x, wq_a, cq.data(), M, E, QL);
  rmsnorm(cq.data(), q_norm, M, QL, eps);
  matmul(cq.data(), wq_nope, qn.data(), M, QL, H * DN);
  matmul(cq.data(), wq_rope, qr.data(), M, QL, H * DR);
  // Compressed KV path and the decoupled rope key.
  matmul(x, wkv_a, ckv.data(), M, E, KL);
  rmsnorm(ckv.data(), kv_norm, M, KL, eps);
  matmul(x, wk_rope, kr.data(), M, E, DR);
  matmul(ckv.data(), wk_nope, kn.data(), M, KL, H * DN);
  matmul(ckv.data(), wv, vv.data(), M, KL, H * DV);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      for (int64_t h = 0; h < H; ++h)
        rope(qr.data() + ((b * S + s) * H + h) * DR, rope_cos, rope_sin, s, DR2);
      rope(kr.data() + (b * S + s) * DR, rope_cos, rope_sin, s, DR2);
    }
  // Causal softmax attention per (batch, head).
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < S; ++i) {
        const Acc* qni = qn.data() + ((b * S + i) * H + h) * DN;
        const Acc* qri = qr.data() + ((b * S + i) * H + h) * DR;
        Acc m = -INFINITY;
        for (int64_t j = 0; j <= i; ++j) {
          const Acc* knj = kn.data() + ((b * S + j) * H + h) * DN;
          const Acc* krj = kr.data() + (b * S + j) * DR;
          Acc sn = 0, sr = 0;
          for (int64_t c = 0; c < DN; ++c) sn += qni[c] * knj[c];
          for (int64_t r = 0; r < DR; ++r) sr += qri[r] * krj[r];
          p[j] = (sn + sr) * scale;
          m = p[j] > m ? p[j] : m;
        }
        Acc l = 0;
        for (int64_t j = 0; j <= i; ++j) {
          p[j] = std::exp(p[j] - m);
          l += p[j];
        }
        Acc* a = att.data() + ((b * S + i) * H + h) * DV;
        for (int64_t c = 0; c < DV; ++c) a[c] = 0;
        for (int64_t j = 0; j <= i; ++j) {
          const Acc* vj = vv.data() + ((b * S + j) * H + h) * DV;
          for (int64_t c = 0; c < DV; ++c) a[c] += p[j] * vj[c];
        }
        for (int64_t c = 0; c < DV; ++c) a[c] = a[c] / l;
      }
  // Output projection over (head, value dim).
  std::vector<Acc> out(BS * E);
  matmul(att.data(), wo, out.data(), M, H * DV, E);
  for (size_t i = 0; i < BS * E; ++i) y[i] = T(out[i]);
}
