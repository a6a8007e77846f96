// Library baseline for 05_flex_attention: what a framework runs eagerly for a score_mod + mask
// — dense attention: per (batch, head), the full S x S scores with oneDNN's dnnl_sgemm
// (1/sqrt(D) folded into alpha), the ALiBi bias and the sliding-window mask as one plain loop
// (masked scores -1e30), one oneDNN softmax primitive over all B*H*S rows, then P @ V with
// dnnl_sgemm.
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
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

void flex_attention(const float* q, const float* k, const float* v, float* o, int64_t B, int64_t H,
                    int64_t S, int64_t D, int64_t W) {
  if (B * H * S * D == 0) return;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> P;
  P.resize(static_cast<size_t>(B * H * S * S));
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t bh = b * H + h;
      const float slope = std::pow(2.0f, -8.0f * static_cast<float>(h + 1) / static_cast<float>(H));
      float* Pb = P.data() + bh * S * S;
      dnnl_sgemm('N', 'T', S, S, D, scale, q + bh * S * D, D, k + bh * S * D, D, 0.0f, Pb, S);
      for (int64_t i = 0; i < S; ++i)
        for (int64_t j = 0; j < S; ++j) {
          float& s = Pb[i * S + j];
          s = (j <= i && i - j < W) ? s + slope * static_cast<float>(j - i) : -1e30f;
        }
    }
  softmax_rows(P.data(), B * H * S, S);
  for (int64_t bh = 0; bh < B * H; ++bh)
    dnnl_sgemm('N', 'N', S, D, S, 1.0f, P.data() + bh * S * S, S, v + bh * S * D, D, 0.0f,
               o + bh * S * D, D);
}
