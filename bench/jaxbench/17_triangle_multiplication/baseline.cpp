// Library baseline for 17_triangle_multiplication: the AlphaFold2 module as a framework runs it
// eagerly on oneDNN — layer-normalization primitives (scale + shift) for both LayerNorms,
// one matmul primitive with bias per Linear, logistic eltwise primitives for the gates and
// binary-mul primitives for the gating products; the 'ikc,jkc->ijc' einsum as XLA lowers it:
// transpose both operands to channel-major [CI, N, N] (a loop), one dnnl_sgemm per channel
// (L_c @ R_c^T), and transpose back.
#include <oneapi/dnnl/dnnl.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
#include <vector>

namespace {

using namespace dnnl;
using dt = memory::data_type;
using tag = memory::format_tag;

engine& eng() {
  static engine e(engine::kind::cpu, 0);
  return e;
}
stream& strm() {
  static stream s(eng());
  return s;
}

// dst[R, C] = LayerNorm(src) * scale + shift (over C).
void layer_norm(const float* src, float* dst, const float* scale, const float* shift, int64_t R,
                int64_t C, float eps) {
  memory::desc md({R, C}, dt::f32, tag::ab), sd({C}, dt::f32, tag::a);
  const auto flags = normalization_flags::use_scale | normalization_flags::use_shift;
  layer_normalization_forward::primitive_desc pd(
      layer_normalization_forward::desc(prop_kind::forward_inference, md, eps, flags), eng());
  memory s(md, eng(), const_cast<float*>(src)), d(md, eng(), dst);
  memory sc(sd, eng(), const_cast<float*>(scale)), sh(sd, eng(), const_cast<float*>(shift));
  layer_normalization_forward(pd).execute(
      strm(), {{DNNL_ARG_SRC, s}, {DNNL_ARG_DST, d}, {DNNL_ARG_SCALE, sc}, {DNNL_ARG_SHIFT, sh}});
  strm().wait();
}

// dst[R, D] = src[R, C] @ w[C, D] + b.
void linear(const float* src, const float* w, const float* b, float* dst, int64_t R, int64_t C,
            int64_t D) {
  memory::desc smd({R, C}, dt::f32, tag::ab), wmd({C, D}, dt::f32, tag::ab);
  memory::desc bmd({1, D}, dt::f32, tag::ab), dmd({R, D}, dt::f32, tag::ab);
  matmul::primitive_desc pd(matmul::desc(smd, wmd, bmd, dmd), eng());
  memory s(smd, eng(), const_cast<float*>(src)), wm(wmd, eng(), const_cast<float*>(w));
  memory bm(bmd, eng(), const_cast<float*>(b)), d(dmd, eng(), dst);
  matmul(pd).execute(strm(), {{DNNL_ARG_SRC, s}, {DNNL_ARG_WEIGHTS, wm}, {DNNL_ARG_BIAS, bm},
                              {DNNL_ARG_DST, d}});
  strm().wait();
}

// x *= sigmoid(g), n elements (logistic eltwise on g in place, then binary mul).
void gate(float* x, float* g, int64_t n) {
  memory::desc md({n}, dt::f32, tag::a);
  memory xm(md, eng(), x), gm(md, eng(), g);
  eltwise_forward(eltwise_forward::primitive_desc(
                      eltwise_forward::desc(prop_kind::forward_inference,
                                            algorithm::eltwise_logistic, md, 0.0f, 0.0f),
                      eng()))
      .execute(strm(), {{DNNL_ARG_SRC, gm}, {DNNL_ARG_DST, gm}});
  binary(binary::primitive_desc(binary::desc(algorithm::binary_mul, md, md, md), eng()))
      .execute(strm(), {{DNNL_ARG_SRC_0, xm}, {DNNL_ARG_SRC_1, gm}, {DNNL_ARG_DST, xm}});
  strm().wait();
}

}  // namespace

void triangle_multiplication(const float* act, const float* ln_in_scale, const float* ln_in_offset,
                             const float* w_lp, const float* b_lp, const float* w_lg,
                             const float* b_lg, const float* w_rp, const float* b_rp,
                             const float* w_rg, const float* b_rg, const float* ln_c_scale,
                             const float* ln_c_offset, const float* w_o, const float* b_o,
                             const float* w_g, const float* b_g, float* out, int64_t N, int64_t C,
                             int64_t CI, float eps) {
  const int64_t R = N * N;
  if (R * C == 0 || CI == 0) return;
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };
  // Intermediates live in static buffers reused across calls, as a framework's caching allocator
  // reuses them: on this machine the page faults of fresh multi-MiB buffers on every call cost
  // more than the arithmetic.
  static std::vector<float> xn, left, right, g, Lt, Rt, Tt, t, tn, og;
  xn.resize(n(R * C)), left.resize(n(R * CI)), right.resize(n(R * CI)), g.resize(n(R * CI));
  layer_norm(act, xn.data(), ln_in_scale, ln_in_offset, R, C, eps);
  linear(xn.data(), w_lp, b_lp, left.data(), R, C, CI);
  linear(xn.data(), w_lg, b_lg, g.data(), R, C, CI);
  gate(left.data(), g.data(), R * CI);
  linear(xn.data(), w_rp, b_rp, right.data(), R, C, CI);
  linear(xn.data(), w_rg, b_rg, g.data(), R, C, CI);
  gate(right.data(), g.data(), R * CI);
  // einsum('ikc,jkc->ijc'): channel-major operands, one GEMM per channel.
  Lt.resize(n(R * CI)), Rt.resize(n(R * CI)), Tt.resize(n(R * CI)), t.resize(n(R * CI));
  for (int64_t r = 0; r < R; ++r)
    for (int64_t d = 0; d < CI; ++d) {
      Lt[d * R + r] = left[r * CI + d];
      Rt[d * R + r] = right[r * CI + d];
    }
  for (int64_t d = 0; d < CI; ++d)
    dnnl_sgemm('N', 'T', N, N, N, 1.0f, Lt.data() + d * R, N, Rt.data() + d * R, N, 0.0f,
               Tt.data() + d * R, N);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t d = 0; d < CI; ++d) t[r * CI + d] = Tt[d * R + r];
  tn.resize(n(R * CI)), og.resize(n(R * C));
  layer_norm(t.data(), tn.data(), ln_c_scale, ln_c_offset, R, CI, eps);
  linear(tn.data(), w_o, b_o, out, R, CI, C);
  linear(xn.data(), w_g, b_g, og.data(), R, C, C);
  gate(out, og.data(), R * C);
}
