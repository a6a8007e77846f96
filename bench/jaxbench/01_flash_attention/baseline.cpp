// Library baseline for 01_flash_attention: causal attention as a framework runs it eagerly,
// one library call per op — per (batch, head): S = Q K^T with oneDNN's dnnl_sgemm (the scale
// folded into alpha), the causal mask as a plain loop (masked scores set to -1e30, as JAX's
// where(mask, s, -1e9)), one oneDNN softmax primitive over all B*H*S rows, then O = P V with
// dnnl_sgemm. The full S x S score matrix of every head is materialized (B*H*S*S floats).
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

void flash_attention(const float* q, const float* k, const float* v, float* o, int64_t B,
                     int64_t H, int64_t S, int64_t D) {
  if (B * H * S == 0) return;
  if (D == 0) {  // empty head dim: o has no elements
    return;
  }
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> P;
  P.resize(static_cast<size_t>(B * H * S * S));
  for (int64_t bh = 0; bh < B * H; ++bh) {
    float* Pb = P.data() + bh * S * S;
    dnnl_sgemm('N', 'T', S, S, D, scale, q + bh * S * D, D, k + bh * S * D, D, 0.0f, Pb, S);
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = i + 1; j < S; ++j) Pb[i * S + j] = -1e30f;
  }
  softmax_rows(P.data(), B * H * S, S);
  for (int64_t bh = 0; bh < B * H; ++bh)
    dnnl_sgemm('N', 'N', S, D, S, 1.0f, P.data() + bh * S * S, S, v + bh * S * D, D, 0.0f,
               o + bh * S * D, D);
}
