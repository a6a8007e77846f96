// Library baseline for 28_convtranspose3d_layernorm_gelu_scaling: the PyTorch module run eagerly
// on oneDNN, one library call per op: nn.ConvTranspose3d (oneDNN deconvolution, its own blocked
// layouts with reorders from and to NCDHW), nn.LayerNorm over the last dim (oneDNN layer
// normalization with scale and shift), F.gelu (eltwise_gelu_erf) and x * scaling_factor
// (eltwise_linear).
#include <oneapi/dnnl/dnnl.hpp>

#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace {

// One oneDNN CPU engine and stream for the process. Primitives are created per call (oneDNN's
// primitive cache returns them on later calls), one primitive per PyTorch op, as in eager mode.
using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;
using dnnl::algorithm;
using dnnl::prop_kind;

dnnl::engine& eng() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
dnnl::stream& strm() {
  static dnnl::stream s(eng());
  return s;
}

// Dense row-major layout of a tensor of the given rank.
tag plain(size_t rank) {
  static const tag tags[] = {tag::undef, tag::a, tag::ab, tag::abc, tag::abcd, tag::abcde};
  return tags[rank];
}
memory::desc md(const memory::dims& d) { return memory::desc(d, dt::f32, plain(d.size())); }
memory mem(const memory::dims& d, const float* p) {
  return memory(md(d), eng(), const_cast<float*>(p));
}
// Scratch buffers kept across calls, as a framework's caching allocator keeps them: a fresh
// multi-megabyte allocation is page-faulted in on every call, which on this VM costs more than
// the ops themselves. Slots 0-4 are the ops' intermediates, 5-7 the convolution's reorders.
float* buf(int slot, int64_t n) {
  static std::vector<float> pool[8];
  if (static_cast<int64_t>(pool[slot].size()) < n) pool[slot].resize(n);
  return pool[slot].data();
}
int64_t count(const memory::dims& d) {
  int64_t n = 1;
  for (auto v : d) n *= v;
  return n;
}

// y = f(x) elementwise over n values (oneDNN eltwise; alpha/beta as oneDNN defines them).
void eltwise(algorithm alg, const float* x, float* y, int64_t n, float alpha = 0.0f,
             float beta = 0.0f) {
  if (n == 0) return;
  const memory::desc d = md({n});
  dnnl::eltwise_forward::primitive_desc pd(
      {prop_kind::forward_inference, alg, d, alpha, beta}, eng());
  dnnl::eltwise_forward(pd).execute(strm(),
                                    {{DNNL_ARG_SRC, mem({n}, x)}, {DNNL_ARG_DST, mem({n}, y)}});
  strm().wait();
}

// Normalizes each row of src[rows, cols] (mean and biased variance over the row, eps inside the
// square root), then y * gamma[col] + beta[col] when given (oneDNN layer normalization).
void layernorm(const float* src, float* dst, int64_t rows, int64_t cols, float eps,
               const float* gamma = nullptr, const float* beta = nullptr) {
  if (rows == 0 || cols == 0) return;
  auto flags = dnnl::normalization_flags::none;
  if (gamma) flags |= dnnl::normalization_flags::use_scale;
  if (beta) flags |= dnnl::normalization_flags::use_shift;
  const memory::dims d = {rows, cols};
  dnnl::layer_normalization_forward::primitive_desc pd(
      {prop_kind::forward_training, md(d), eps, flags}, eng());
  std::vector<float> mean(rows), var(rows);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, mem(d, src)}, {DNNL_ARG_DST, mem(d, dst)},
      {DNNL_ARG_MEAN, memory(pd.mean_desc(), eng(), mean.data())},
      {DNNL_ARG_VARIANCE, memory(pd.variance_desc(), eng(), var.data())}};
  if (gamma) args.insert({DNNL_ARG_SCALE, mem({cols}, gamma)});
  if (beta) args.insert({DNNL_ARG_SHIFT, mem({cols}, beta)});
  dnnl::layer_normalization_forward(pd).execute(strm(), args);
  strm().wait();
}

// A (de)convolution on plain NC[D]HW tensors the way PyTorch's oneDNN path runs it: the
// primitive picks its own (blocked) layouts; src and weights are reordered into them and dst is
// reordered back. wtag is the weights' plain layout (oihw/oidhw, or iodhw for ConvTranspose3d).
void conv(bool transposed, const float* x, const memory::dims& xd, const float* w,
          const memory::dims& wd, tag wtag, const float* bias, float* y, const memory::dims& yd,
          const memory::dims& strides, const memory::dims& pad) {
  if (count(yd) == 0) return;
  auto any = [](const memory::dims& d) { return memory::desc(d, dt::f32, tag::any); };
  const memory::desc bd({yd[1]}, dt::f32, tag::a);
  const memory::desc src_any = any(xd), w_any = any(wd), dst_any = any(yd);
  memory::desc src_md, w_md, dst_md;
  dnnl::primitive prim;
  if (transposed) {
    dnnl::deconvolution_forward::primitive_desc pd(
        {prop_kind::forward_inference, algorithm::deconvolution_direct, src_any, w_any, bd,
         dst_any, strides, pad, pad},
        eng());
    src_md = pd.src_desc(), w_md = pd.weights_desc(), dst_md = pd.dst_desc();
    prim = dnnl::deconvolution_forward(pd);
  } else {
    dnnl::convolution_forward::primitive_desc pd(
        {prop_kind::forward_inference, algorithm::convolution_direct, src_any, w_any, bd,
         dst_any, strides, pad, pad},
        eng());
    src_md = pd.src_desc(), w_md = pd.weights_desc(), dst_md = pd.dst_desc();
    prim = dnnl::convolution_forward(pd);
  }
  auto words = [](const memory::desc& d) {
    return static_cast<int64_t>(d.get_size() / sizeof(float)) + 1;
  };
  auto to = [&](memory m, const memory::desc& want, int slot) {
    if (m.get_desc() == want) return m;
    memory r(want, eng(), buf(slot, words(want)));
    dnnl::reorder(m, r).execute(strm(), m, r);
    return r;
  };
  memory xs = to(mem(xd, x), src_md, 5);
  memory ws = to(memory({wd, dt::f32, wtag}, eng(), const_cast<float*>(w)), w_md, 6);
  memory yplain = mem(yd, y);
  memory ys =
      dst_md == yplain.get_desc() ? yplain : memory(dst_md, eng(), buf(7, words(dst_md)));
  prim.execute(strm(), {{DNNL_ARG_SRC, xs},
                        {DNNL_ARG_WEIGHTS, ws},
                        {DNNL_ARG_BIAS, mem({yd[1]}, bias)},
                        {DNNL_ARG_DST, ys}});
  if (ys != yplain) dnnl::reorder(ys, yplain).execute(strm(), ys, yplain);
  strm().wait();
}

}  // namespace

void convtranspose3d_layernorm_gelu_scaling(const float* x, const float* weight,
                                            const float* conv_bias, const float* gamma,
                                            const float* beta, float* y, int64_t N, int64_t C,
                                            int64_t D, int64_t H, int64_t W, int64_t R, float eps,
                                            float scaling_factor) {
  const int64_t K = 2 * W + R - 4, OD = 2 * D + R - 4, OH = 2 * H + R - 4, OW = K;
  const int64_t n = N * K * OD * OH * OW;
  if (n == 0) return;
  // self.conv_transpose(x): weights [C, K, R, R, R] are oneDNN's (o, i, d, h, w) in iodhw order.
  conv(true, x, {N, C, D, H, W}, weight, {K, C, R, R, R}, tag::iodhw, conv_bias, y,
       {N, K, OD, OH, OW}, {2, 2, 2}, {1, 1, 1});
  layernorm(y, y, N * K * OD * OH, OW, eps, gamma, beta);             // self.layer_norm(x)
  eltwise(algorithm::eltwise_gelu_erf, y, y, n);                      // F.gelu(x)
  eltwise(algorithm::eltwise_linear, y, y, n, scaling_factor, 0.0f);  // x * scaling_factor
}
