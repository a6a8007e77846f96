// Library baseline for 12_rmsnorm: RMSNorm composed from oneDNN primitives, as a framework runs
// it eagerly. The installed oneDNN (2.6) predates the RMS-normalization flag of layer
// normalization (dnnl_rms_norm, oneDNN 3.3), so it is composed:
//   1. ms[n] = mean_d x[n,d]^2: eltwise square into a scratch tensor, then a mean reduction over
//      each row (x.pow(2).mean(-1)). oneDNN 2.6's norm_lp_* reductions, which square on the fly,
//      only have a scalar reference implementation (~100x slower), so they are not used.
//   2. y = (x - 0) / sqrt(ms + eps) * w: layer normalization with use_global_stats and use_scale,
//      fed mean = 0 and variance = ms, which is exactly RMSNorm (eps inside the square root). This
//      one primitive stands in for the rsqrt, x * r and w * (...) ops of the eager module.
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdint>
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
// Buffers kept across calls, as a framework's caching allocator keeps them (slot 0: the all-zero
// mean, slot 1: mean of squares, slot 2: the squares); resize() zero-fills new elements and the
// zero mean is only ever read.
float* scratch(int slot, int64_t n) {
  static std::vector<float> bufs[3];
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

// dst = op(src) elementwise over n floats (src == dst is allowed).
void eltwise(alg a, const float* src, float* dst, int64_t n, float alpha = 0, float beta = 0) {
  dnnl::eltwise_forward::primitive_desc pd(
      dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference, a, md({n}), alpha, beta),
      cpu());
  dnnl::eltwise_forward(pd).execute(strm(),
                                    {{DNNL_ARG_SRC, mem({n}, src)}, {DNNL_ARG_DST, mem({n}, dst)}});
}

}  // namespace

void rmsnorm(const float* x, const float* w, float* y, int64_t N, int64_t D, float eps) {
  if (N == 0 || D == 0) return;
  float* mean = scratch(0, N);  // zeros
  float* ms = scratch(1, N);
  // ms[n] = mean_d x[n,d]^2, as x.pow(2).mean(-1) runs eagerly: eltwise square into a scratch
  // tensor, then a mean reduction over each row (oneDNN's norm_lp reductions, which would square
  // on the fly, have only a reference implementation in 2.6: ~100x slower than these two jit
  // primitives). oneDNN rejects a reduction that reduces nothing: for D == 1 the mean is the
  // square itself.
  if (D == 1) {
    eltwise(alg::eltwise_square, x, ms, N);
  } else {
    float* sq = scratch(2, N * D);
    eltwise(alg::eltwise_square, x, sq, N * D);
    dnnl::reduction::primitive_desc pd(
        dnnl::reduction::desc(alg::reduction_mean, md({N, D}), md({N, 1}), 0.f, 0.f), cpu());
    dnnl::reduction(pd).execute(strm(),
                                {{DNNL_ARG_SRC, mem({N, D}, sq)}, {DNNL_ARG_DST, mem({N, 1}, ms)}});
  }
  // y = (x - 0) / sqrt(ms + eps) * w
  dnnl::layer_normalization_forward::primitive_desc pd(
      dnnl::layer_normalization_forward::desc(
          dnnl::prop_kind::forward_inference, md({N, D}), eps,
          dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale),
      cpu());
  dnnl::layer_normalization_forward(pd).execute(
      strm(), {{DNNL_ARG_SRC, mem({N, D}, x)},
               {DNNL_ARG_DST, mem({N, D}, y)},
               {DNNL_ARG_SCALE, mem({D}, w)},
               {DNNL_ARG_MEAN, memory(pd.mean_desc(), cpu(), mean)},
               {DNNL_ARG_VARIANCE, memory(pd.variance_desc(), cpu(), ms)}});
  strm().wait();
}
