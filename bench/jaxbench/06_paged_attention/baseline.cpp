// Library baseline for 06_paged_attention: decode attention as a framework runs it eagerly —
// per sequence, gather its pages into contiguous K and V ([len, Hkv, D], one memcpy per page
// and head-row block), then per KV head the scores of its G query heads with oneDNN's
// dnnl_sgemm ([G, D] x [len, D]^T, 1/sqrt(D) in alpha), one oneDNN softmax primitive over the
// sequence's Hq score rows, and P @ V with dnnl_sgemm. Only the sequence's own pages are
// gathered (JaxBench's vmap baseline gathers every page of the table and masks).
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

void paged_attention(const float* q, const float* k_pages, const float* v_pages,
                     const int32_t* lens, const int32_t* page_table, float* o, int64_t NS,
                     int64_t Hkv, int64_t G, int64_t D, int64_t PS, int64_t MAXP, int64_t NP) {
  (void)NP;
  const int64_t Hq = Hkv * G;
  if (NS * Hq * D == 0) return;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  const int64_t row = Hkv * D;  // floats per token in a page
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> K, V, P;
  K.resize(static_cast<size_t>(MAXP * PS * row));
  V.resize(K.size());
  P.resize(static_cast<size_t>(Hq * MAXP * PS));
  for (int64_t n = 0; n < NS; ++n) {
    const int64_t len = lens[n];
    for (int64_t pg = 0; pg * PS < len; ++pg) {
      const int64_t page = page_table[n * MAXP + pg];
      const int64_t cnt = len - pg * PS < PS ? len - pg * PS : PS;
      std::memcpy(K.data() + pg * PS * row, k_pages + page * PS * row, sizeof(float) * cnt * row);
      std::memcpy(V.data() + pg * PS * row, v_pages + page * PS * row, sizeof(float) * cnt * row);
    }
    for (int64_t hk = 0; hk < Hkv; ++hk)
      dnnl_sgemm('N', 'T', G, len, D, scale, q + (n * Hq + hk * G) * D, D, K.data() + hk * D, row,
                 0.0f, P.data() + hk * G * len, len);
    softmax_rows(P.data(), Hq, len);
    for (int64_t hk = 0; hk < Hkv; ++hk)
      dnnl_sgemm('N', 'N', G, D, len, 1.0f, P.data() + hk * G * len, len, V.data() + hk * D, row,
                 0.0f, o + (n * Hq + hk * G) * D, D);
  }
}
