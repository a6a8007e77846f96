// Library baseline for 10_sparse_moe: the Hugging Face Mixtral eager loop composed from oneDNN —
// routing (top-2 + softmax over the pair) as a plain loop; then per expert: gather its tokens
// (index_select), G = Xe @ w1[e] and U = Xe @ w3[e] with dnnl_sgemm, silu(G) with oneDNN's swish
// eltwise primitive and * U with its binary-mul primitive, Ye = H @ w2[e] with dnnl_sgemm, and
// the weighted scatter-add back into y (index_add) as a loop.
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
dnnl::stream& strm() {
  static dnnl::stream s(eng());
  return s;
}

// g = silu(g) * u over n elements (oneDNN eltwise swish, then binary mul), in place in g.
void silu_mul(float* g, const float* u, int64_t n) {
  using namespace dnnl;
  memory::desc md({n}, memory::data_type::f32, memory::format_tag::a);
  memory mg(md, eng(), g), mu(md, eng(), const_cast<float*>(u));
  eltwise_forward::primitive_desc epd(
      eltwise_forward::desc(prop_kind::forward_inference, algorithm::eltwise_swish, md, 1.0f),
      eng());
  eltwise_forward(epd).execute(strm(), {{DNNL_ARG_SRC, mg}, {DNNL_ARG_DST, mg}});
  binary::primitive_desc bpd(binary::desc(algorithm::binary_mul, md, md, md), eng());
  binary(bpd).execute(strm(), {{DNNL_ARG_SRC_0, mg}, {DNNL_ARG_SRC_1, mu}, {DNNL_ARG_DST, mg}});
  strm().wait();
}

}  // namespace

void sparse_moe(const float* x, const float* router_logits, const float* w1, const float* w3,
                const float* w2, float* y, int64_t Ntok, int64_t E, int64_t F, int64_t NE) {
  if (Ntok * E == 0) return;
  std::memset(y, 0, sizeof(float) * Ntok * E);
  // Routing: per expert, its tokens and their weights.
  std::vector<std::vector<int64_t>> tok(static_cast<size_t>(NE));
  std::vector<std::vector<float>> wgt(static_cast<size_t>(NE));
  for (int64_t t = 0; t < Ntok; ++t) {
    const float* lg = router_logits + t * NE;
    int64_t e1 = 0;
    for (int64_t e = 1; e < NE; ++e)
      if (lg[e] > lg[e1]) e1 = e;
    int64_t e2 = e1 == 0 ? 1 : 0;
    for (int64_t e = 0; e < NE; ++e)
      if (e != e1 && lg[e] > lg[e2]) e2 = e;
    const float z2 = std::exp(lg[e2] - lg[e1]);
    tok[e1].push_back(t), wgt[e1].push_back(1.0f / (1.0f + z2));
    tok[e2].push_back(t), wgt[e2].push_back(z2 / (1.0f + z2));
  }
  if (F == 0) return;
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> X, G, U, Y;
  for (int64_t e = 0; e < NE; ++e) {
    const int64_t n = static_cast<int64_t>(tok[e].size());
    if (n == 0) continue;
    X.resize(static_cast<size_t>(n * E));
    G.resize(static_cast<size_t>(n * F));
    U.resize(static_cast<size_t>(n * F));
    Y.resize(static_cast<size_t>(n * E));
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(X.data() + i * E, x + tok[e][i] * E, sizeof(float) * E);
    dnnl_sgemm('N', 'N', n, F, E, 1.0f, X.data(), E, w1 + e * E * F, F, 0.0f, G.data(), F);
    dnnl_sgemm('N', 'N', n, F, E, 1.0f, X.data(), E, w3 + e * E * F, F, 0.0f, U.data(), F);
    silu_mul(G.data(), U.data(), n * F);
    dnnl_sgemm('N', 'N', n, E, F, 1.0f, G.data(), F, w2 + e * F * E, E, 0.0f, Y.data(), E);
    for (int64_t i = 0; i < n; ++i) {
      float* yt = y + tok[e][i] * E;
      const float w = wgt[e][i];
      for (int64_t d = 0; d < E; ++d) yt[d] += w * Y[i * E + d];
    }
  }
}
