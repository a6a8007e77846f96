// Library baseline for 03_mla_attention: the MLA block as a framework runs it eagerly — every
// projection is one oneDNN dnnl_sgemm, the latent RMSNorms and the RoPE rotations are plain
// loops (elementwise ops), q and k are concatenated [nope | rope] per head as MaxText does, the
// per-head scores are dnnl_sgemm calls reading the concatenated tensors through strides
// (1/sqrt(DN + DR) folded into alpha), the causal mask is a loop (-1e30), one oneDNN softmax
// primitive covers all B*H*S score rows, P @ V is dnnl_sgemm, and the output projection is one
// dnnl_sgemm over (head, value dim).
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

// C[M,N] = alpha * op(A) @ op(B) with leading dimensions; guards empty extents.
void gemm(char ta, char tb, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
          int64_t lda, const float* B, int64_t ldb, float* C, int64_t ldc) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    for (int64_t i = 0; i < M; ++i) std::memset(C + i * ldc, 0, sizeof(float) * N);
    return;
  }
  dnnl_sgemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, 0.0f, C, ldc);
}

void softmax_rows(float* x, int64_t rows, int64_t cols) {
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  static dnnl::stream strm(eng);
  dnnl::memory::desc md({rows, cols}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  dnnl::softmax_forward::desc d(dnnl::prop_kind::forward_inference, md, 1);
  dnnl::softmax_forward::primitive_desc pd(d, eng);
  dnnl::memory mem(md, eng, x);
  dnnl::softmax_forward(pd).execute(strm, {{DNNL_ARG_SRC, mem}, {DNNL_ARG_DST, mem}});
  strm.wait();
}

void rmsnorm(float* z, const float* w, int64_t M, int64_t N, float eps) {
  for (int64_t i = 0; i < M; ++i) {
    float* r = z + i * N;
    float ss = 0;
    for (int64_t n = 0; n < N; ++n) ss += r[n] * r[n];
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(N) + eps);
    for (int64_t n = 0; n < N; ++n) r[n] = r[n] * inv * w[n];
  }
}

void rope(const float* z, float* out, const float* c, const float* s, int64_t DR2) {
  for (int64_t i = 0; i < DR2; ++i) {
    const float x1 = z[2 * i], x2 = z[2 * i + 1];
    out[2 * i] = x1 * c[i] - x2 * s[i];
    out[2 * i + 1] = x1 * s[i] + x2 * c[i];
  }
}

}  // namespace

void mla_attention(const float* x, const float* wq_a, const float* q_norm, const float* wq_nope,
                   const float* wq_rope, const float* wkv_a, const float* kv_norm,
                   const float* wk_rope, const float* wk_nope, const float* wv, const float* wo,
                   const float* rope_cos, const float* rope_sin, float* y, int64_t B, int64_t S,
                   int64_t E, int64_t H, int64_t QL, int64_t KL, int64_t DN, int64_t DR2,
                   int64_t DV, float eps) {
  const int64_t M = B * S, DR = 2 * DR2, DQ = DN + DR;
  if (M == 0 || E == 0) return;
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> cq, qn, qp, ck, kp, kn, vv, Q, K, kr, P, att;
  cq.resize(n(M * QL)), qn.resize(n(M * H * DN)), qp.resize(n(M * H * DR)), ck.resize(n(M * KL));
  kp.resize(n(M * DR)), kn.resize(n(M * H * DN)), vv.resize(n(M * H * DV));
  gemm('N', 'N', M, QL, E, 1.0f, x, E, wq_a, QL, cq.data(), QL);
  rmsnorm(cq.data(), q_norm, M, QL, eps);
  gemm('N', 'N', M, H * DN, QL, 1.0f, cq.data(), QL, wq_nope, H * DN, qn.data(), H * DN);
  gemm('N', 'N', M, H * DR, QL, 1.0f, cq.data(), QL, wq_rope, H * DR, qp.data(), H * DR);
  gemm('N', 'N', M, KL, E, 1.0f, x, E, wkv_a, KL, ck.data(), KL);
  rmsnorm(ck.data(), kv_norm, M, KL, eps);
  gemm('N', 'N', M, DR, E, 1.0f, x, E, wk_rope, DR, kp.data(), DR);
  gemm('N', 'N', M, H * DN, KL, 1.0f, ck.data(), KL, wk_nope, H * DN, kn.data(), H * DN);
  gemm('N', 'N', M, H * DV, KL, 1.0f, ck.data(), KL, wv, H * DV, vv.data(), H * DV);
  // q = concat(qn, rope(qp)), k = concat(kn, broadcast(rope(kp))): [M, H, DQ] each.
  Q.resize(n(M * H * DQ)), K.resize(n(M * H * DQ)), kr.resize(n(DR));
  for (int64_t t = 0; t < M; ++t) {
    const int64_t s = t % S;
    rope(kp.data() + t * DR, kr.data(), rope_cos + s * DR2, rope_sin + s * DR2, DR2);
    for (int64_t h = 0; h < H; ++h) {
      float* q = Q.data() + (t * H + h) * DQ;
      float* k = K.data() + (t * H + h) * DQ;
      std::memcpy(q, qn.data() + (t * H + h) * DN, sizeof(float) * DN);
      std::memcpy(k, kn.data() + (t * H + h) * DN, sizeof(float) * DN);
      rope(qp.data() + (t * H + h) * DR, q + DN, rope_cos + s * DR2, rope_sin + s * DR2, DR2);
      std::memcpy(k + DN, kr.data(), sizeof(float) * DR);
    }
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(DQ));
  P.resize(n(B * H * S * S)), att.resize(n(M * H * DV));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      float* Pb = P.data() + (b * H + h) * S * S;
      gemm('N', 'T', S, S, DQ, scale, Q.data() + (b * S * H + h) * DQ, H * DQ,
           K.data() + (b * S * H + h) * DQ, H * DQ, Pb, S);
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = i + 1; j < S; ++j) Pb[i * S + j] = -1e30f;
    }
  softmax_rows(P.data(), B * H * S, S);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      gemm('N', 'N', S, DV, S, 1.0f, P.data() + (b * H + h) * S * S, S,
           vv.data() + (b * S * H + h) * DV, H * DV, att.data() + (b * S * H + h) * DV, H * DV);
  gemm('N', 'N', M, E, H * DV, 1.0f, att.data(), H * DV, wo, E, y, E);
}
