// Library baseline for 09_swiglu_mlp: the Llama feed-forward block as a framework runs it
// eagerly, one library call per op:
//   g = x @ Wg, u = x @ Wu      (two oneDNN dnnl_sgemm calls, row-major, no transposes: Wg and Wu
//                                are stored [Dm, F])
//   s = silu(g)                 (oneDNN eltwise swish, alpha = 1: g * sigmoid(g))
//   h = s * u                   (oneDNN binary mul)
//   y = h @ Wd                  (dnnl_sgemm; Wd stored [F, Dm])
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

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
// Temporaries live in buffers that persist across calls, as with a framework's caching
// allocator: a repeated call does not pay fresh page faults for its intermediates.
float* scratch(int slot, int64_t n) {
  static std::vector<float> bufs[2];
  if (bufs[slot].size() < static_cast<size_t>(n)) bufs[slot].resize(static_cast<size_t>(n));
  return bufs[slot].data();
}
memory::desc md(const memory::dims& d) {
  static const tag tags[] = {tag::undef, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde};
  return memory::desc(d, dt::f32, tags[d.size()]);
}
memory mem(const memory::dims& d, const float* p) {
  return memory(md(d), cpu(), const_cast<float*>(p));
}

// C[M,N] = A[M,K] @ B[K,N], row-major (dnnl_sgemm; C = 0 when K = 0).
void matmul(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  if (K == 0) {
    std::memset(C, 0, sizeof(float) * M * N);
    return;
  }
  dnnl_sgemm('N', 'N', M, N, K, 1.0f, A, K, B, N, 0.0f, C, N);
}

// dst = op(src) elementwise over n floats (src == dst is allowed).
void eltwise(alg a, const float* src, float* dst, int64_t n, float alpha = 0, float beta = 0) {
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, a, md({n}), alpha, beta),
      cpu());
  dnnl::eltwise_forward(pd).execute(strm(),
                                    {{DNNL_ARG_SRC, mem({n}, src)}, {DNNL_ARG_DST, mem({n}, dst)}});
}

// dst = src0 op src1 elementwise over n floats (dst may alias either source).
void binary(alg a, const float* src0, const float* src1, float* dst, int64_t n) {
  dnnl::binary::primitive_desc pd(dnnl::binary::desc(a, md({n}), md({n}), md({n})), cpu());
  dnnl::binary(pd).execute(strm(), {{DNNL_ARG_SRC_0, mem({n}, src0)},
                                    {DNNL_ARG_SRC_1, mem({n}, src1)},
                                    {DNNL_ARG_DST, mem({n}, dst)}});
}

}  // namespace

void swiglu_mlp(const float* x, const float* Wg, const float* Wu, const float* Wd, float* y,
                int64_t Ntok, int64_t Dm, int64_t F) {
  if (Ntok == 0 || Dm == 0) return;
  if (F == 0) {
    std::memset(y, 0, sizeof(float) * Ntok * Dm);
    return;
  }
  float* g = scratch(0, Ntok * F);
  float* u = scratch(1, Ntok * F);
  matmul(x, Wg, g, Ntok, F, Dm);                               // gate_proj(x)
  matmul(x, Wu, u, Ntok, F, Dm);                               // up_proj(x)
  eltwise(alg::eltwise_swish, g, g, Ntok * F, 1.0f);           // act_fn(gate)
  binary(alg::binary_mul, g, u, g, Ntok * F);                  // act_fn(gate) * up
  strm().wait();
  matmul(g, Wd, y, Ntok, Dm, F);                               // down_proj(...)
}
