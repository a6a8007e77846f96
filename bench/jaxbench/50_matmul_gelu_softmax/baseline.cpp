// Library baseline for 50_matmul_gelu_softmax (KernelBench level 2, problem 99): the module as
// PyTorch runs it eagerly, one oneDNN primitive per op, unfused:
//   self.linear(x)              oneDNN matmul with bias: x[B,I] @ W^T, W[O,I] read in place as an
//                               [I,O] matrix in "ba" layout, + bias[O]
//   F.gelu(x)                   oneDNN eltwise gelu_erf (exact GELU), in place
//   F.softmax(x, dim=1)         oneDNN softmax over each row of [B,O], in place
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstring>

namespace {

using dnnl::memory;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;
using alg = dnnl::algorithm;

dnnl::engine& cpu() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
dnnl::stream& strm() {
  static dnnl::stream s(cpu());
  return s;
}
// A dense row-major f32 tensor of dims d (rank 1-2), and one over caller memory.
memory::desc md(const memory::dims& d) {
  static const tag tags[] = {tag::undef, tag::a, tag::ab};
  return memory::desc(d, dt::f32, tags[d.size()]);
}
memory mem(const memory::dims& d, const float* p) {
  return memory(md(d), cpu(), const_cast<float*>(p));
}

// nn.Linear: y[B,O] = x[B,I] @ W[O,I]^T + bias[O].
void linear(const float* x, const float* W, const float* bias, float* y, int64_t B, int64_t I,
            int64_t O) {
  const memory::desc src_md = md({B, I}), wei_md({I, O}, dt::f32, tag::ba),
                     bia_md = md({1, O}), dst_md = md({B, O});
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_md, bia_md, dst_md), cpu());
  dnnl::matmul(pd).execute(strm(), {{DNNL_ARG_SRC, mem({B, I}, x)},
                                    {DNNL_ARG_WEIGHTS, memory(wei_md, cpu(), const_cast<float*>(W))},
                                    {DNNL_ARG_BIAS, mem({1, O}, bias)},
                                    {DNNL_ARG_DST, mem({B, O}, y)}});
}

// dst = op(src) elementwise over n floats (src == dst is allowed).
void eltwise(alg a, const float* src, float* dst, int64_t n, float alpha = 0, float beta = 0) {
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, a, md({n}), alpha, beta),
      cpu());
  dnnl::eltwise_forward(pd).execute(strm(),
                                    {{DNNL_ARG_SRC, mem({n}, src)}, {DNNL_ARG_DST, mem({n}, dst)}});
}

// In-place softmax over the last axis of a [rows, cols] tensor (oneDNN subtracts the row max).
void softmax(float* p, int64_t rows, int64_t cols) {
  dnnl::softmax_forward::primitive_desc pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, md({rows, cols}), 1), cpu());
  memory m = mem({rows, cols}, p);
  dnnl::softmax_forward(pd).execute(strm(), {{DNNL_ARG_SRC, m}, {DNNL_ARG_DST, m}});
}

}  // namespace

void matmul_gelu_softmax(const float* x, const float* W, const float* bias, float* y, int64_t B,
                         int64_t I, int64_t O) {
  if (B == 0 || O == 0) return;
  if (I == 0) {
    std::memcpy(y, bias, sizeof(float) * O);
    for (int64_t b = 1; b < B; ++b) std::memcpy(y + b * O, bias, sizeof(float) * O);
  } else {
    linear(x, W, bias, y, B, I, O);
  }
  eltwise(alg::eltwise_gelu_erf, y, y, B * O);
  softmax(y, B, O);
  strm().wait();
}
