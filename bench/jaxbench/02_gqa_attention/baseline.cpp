// Library baseline for 02_gqa_attention: causal GQA as a framework runs it eagerly — per
// (batch, query head): S = Q K^T with oneDNN's dnnl_sgemm reading the shared KV head in place
// through leading-dimension strides (scale folded into alpha), the causal mask as a plain loop
// (masked scores -1e30), one oneDNN softmax primitive over all B*Hq*S rows, then O = P V with
// dnnl_sgemm writing the [B, S, Hq, D] output through strides. Scores are materialized
// (B*Hq*S*S floats).
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

// In-place softmax over the last axis of a [rows, cols] row-major matrix (oneDNN primitive).
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

void gqa_attention(const float* q, const float* k, const float* v, float* o, int64_t B, int64_t S,
                   int64_t Hkv, int64_t G, int64_t D) {
  const int64_t Hq = Hkv * G;
  if (B * S * Hq * D == 0) return;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> P;
  P.resize(static_cast<size_t>(B * Hq * S * S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h) {
      float* Pb = P.data() + (b * Hq + h) * S * S;
      dnnl_sgemm('N', 'T', S, S, D, scale, q + (b * S * Hq + h) * D, Hq * D,
                 k + (b * S * Hkv + h / G) * D, Hkv * D, 0.0f, Pb, S);
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = i + 1; j < S; ++j) Pb[i * S + j] = -1e30f;
    }
  softmax_rows(P.data(), B * Hq * S, S);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      dnnl_sgemm('N', 'N', S, D, S, 1.0f, P.data() + (b * Hq + h) * S * S, S,
                 v + (b * S * Hkv + h / G) * D, Hkv * D, 0.0f, o + (b * S * Hq + h) * D, Hq * D);
}
