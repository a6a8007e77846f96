// Library baseline for 04_splash_attention: what a framework runs without a block-sparse kernel
// — dense masked attention: per query head, the full S x S score matrix with oneDNN's
// dnnl_sgemm (reading the shared KV head in place), the block mask applied as a plain loop
// (masked scores -1e30), one oneDNN softmax primitive over all Hq*S rows, then P @ V with
// dnnl_sgemm. It computes every block, including the masked ones.
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

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

void splash_attention(const float* q, const float* k, const float* v, float* o, int64_t Hkv,
                      int64_t G, int64_t S, int64_t D, int64_t BLK, int64_t NW, int64_t NG) {
  const int64_t Hq = Hkv * G;
  if (Hq * S * D == 0) return;
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> P;
  P.resize(static_cast<size_t>(Hq * S * S));
  for (int64_t h = 0; h < Hq; ++h) {
    float* Ph = P.data() + h * S * S;
    dnnl_sgemm('N', 'T', S, S, D, 1.0f, q + h * S * D, D, k + (h / G) * S * D, D, 0.0f, Ph, S);
    // The mask as index ranges per row (no division per element): row i keeps the global
    // keys [0, min(NG*BLK, i+1)) and the window [max(0, (i/BLK - NW + 1) * BLK), i].
    for (int64_t i = 0; i < S; ++i) {
      const int64_t first_block = i / BLK - NW + 1;
      const int64_t lo = first_block > 0 ? first_block * BLK : 0;
      const int64_t gend = NG * BLK < i + 1 ? NG * BLK : i + 1;
      float* row = Ph + i * S;
      for (int64_t j = gend; j < lo; ++j) row[j] = -1e30f;
      for (int64_t j = i + 1; j < S; ++j) row[j] = -1e30f;
    }
  }
  softmax_rows(P.data(), Hq * S, S);
  for (int64_t h = 0; h < Hq; ++h)
    dnnl_sgemm('N', 'N', S, D, S, 1.0f, P.data() + h * S * S, S, v + (h / G) * S * D, D, 0.0f,
               o + h * S * D, D);
}
