// Library baseline for 13_cross_entropy: the unfused framework computation — the full
// [Ntok, V] logits with oneDNN's dnnl_sgemm, oneDNN's logsoftmax primitive over the vocabulary,
// then the NLL gather -logp[t, labels[t]] as a loop.
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

void cross_entropy(const float* h, const float* W, const int32_t* labels, float* loss,
                   int64_t Ntok, int64_t Hd, int64_t V) {
  if (Ntok == 0) return;
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> lg;
  lg.resize(static_cast<size_t>(Ntok * V));
  if (Hd == 0)
    std::memset(lg.data(), 0, sizeof(float) * lg.size());
  else
    dnnl_sgemm('N', 'N', Ntok, V, Hd, 1.0f, h, Hd, W, V, 0.0f, lg.data(), V);
  static dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  static dnnl::stream strm(eng);
  dnnl::memory::desc md({Ntok, V}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::ab);
  dnnl::logsoftmax_forward::primitive_desc pd(
      dnnl::logsoftmax_forward::desc(dnnl::prop_kind::forward_inference, md, 1), eng);
  dnnl::memory mem(md, eng, lg.data());
  dnnl::logsoftmax_forward(pd).execute(strm, {{DNNL_ARG_SRC, mem}, {DNNL_ARG_DST, mem}});
  strm.wait();
  for (int64_t t = 0; t < Ntok; ++t) loss[t] = -lg[t * V + labels[t]];
}
