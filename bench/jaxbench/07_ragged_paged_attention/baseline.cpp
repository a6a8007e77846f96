// Library baseline for 07_ragged_paged_attention: JAX's reference ragged paged attention (a loop
// over sequences with data-dependent slices) composed from oneDNN — per sequence: gather its
// kv_len K and V rows out of the combined pages (memcpy per token and head), then per query
// head the [q_len, kv_len] scores with dnnl_sgemm (1/sqrt(D) in alpha, reading q and K through
// strides), the causal offset mask as a loop (-1e30), one oneDNN softmax primitive over the
// sequence's Hq * q_len rows, and P @ V with dnnl_sgemm writing o through strides.
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

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

}  // namespace

void ragged_paged_attention(const float* q, const float* kv_pages, const int32_t* ctx_lens,
                            const int32_t* cu_prefill, const int32_t* page_indices, float* o,
                            int64_t ND, int64_t NPF, int64_t TP, int64_t Hkv, int64_t G, int64_t D,
                            int64_t PS, int64_t MAXCTX, int64_t NP) {
  (void)NP;
  const int64_t Hq = Hkv * G;
  if (Hq * D == 0) return;
  const int64_t MAXP = (MAXCTX + TP + 1 + PS - 1) / PS, MAXKV = MAXP * PS;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> K, V, P;
  K.resize(static_cast<size_t>(MAXKV * Hkv * D));
  V.resize(K.size());
  for (int64_t n = 0; n < ND + NPF; ++n) {
    const int64_t first = n < ND ? n : ND + cu_prefill[n - ND];
    const int64_t qlen = n < ND ? 1 : cu_prefill[n - ND + 1] - cu_prefill[n - ND];
    if (qlen == 0) continue;
    const int64_t ctx = ctx_lens[n], kvlen = ctx + qlen;
    for (int64_t t = 0; t < kvlen; ++t) {
      const int64_t page = page_indices[n * MAXP + t / PS];
      const float* src = kv_pages + (page * PS + t % PS) * 2 * Hkv * D;
      for (int64_t g = 0; g < Hkv; ++g) {
        std::memcpy(K.data() + (t * Hkv + g) * D, src + 2 * g * D, sizeof(float) * D);
        std::memcpy(V.data() + (t * Hkv + g) * D, src + (2 * g + 1) * D, sizeof(float) * D);
      }
    }
    P.resize(static_cast<size_t>(Hq * qlen * kvlen));
    for (int64_t h = 0; h < Hq; ++h) {
      float* Ph = P.data() + h * qlen * kvlen;
      dnnl_sgemm('N', 'T', qlen, kvlen, D, scale, q + (first * Hq + h) * D, Hq * D,
                 K.data() + (h / G) * D, Hkv * D, 0.0f, Ph, kvlen);
      for (int64_t r = 0; r < qlen; ++r)
        for (int64_t t = ctx + r + 1; t < kvlen; ++t) Ph[r * kvlen + t] = -1e30f;
    }
    softmax_rows(P.data(), Hq * qlen, kvlen);
    for (int64_t h = 0; h < Hq; ++h)
      dnnl_sgemm('N', 'N', qlen, D, kvlen, 1.0f, P.data() + h * qlen * kvlen, kvlen,
                 V.data() + (h / G) * D, Hkv * D, 0.0f, o + (first * Hq + h) * D, Hq * D);
  }
}
