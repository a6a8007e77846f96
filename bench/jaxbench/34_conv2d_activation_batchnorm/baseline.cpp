// Library baseline for 34_conv2d_activation_batchnorm: the PyTorch module run eagerly on oneDNN,
// one library call per op: nn.Conv2d (oneDNN convolution, its own blocked layouts with reorders
// from and to NCHW), F.softplus (eltwise_soft_relu; oneDNN 2.6 has no threshold, which changes
// softplus(v) for v > 20 by < exp(-20)), torch.tanh (eltwise_tanh), torch.multiply (binary mul)
// and nn.BatchNorm2d in training mode (oneDNN batch normalization computing the batch
// statistics).
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

// c = a (op) b with broadcasting: b's dims are a's dims or 1 (oneDNN binary). c has a's dims.
void binary(algorithm alg, const float* a, const memory::dims& da, const float* b,
            const memory::dims& db, float* c) {
  if (count(da) == 0) return;
  dnnl::binary::primitive_desc pd({alg, md(da), md(db), md(da)}, eng());
  dnnl::binary(pd).execute(strm(), {{DNNL_ARG_SRC_0, mem(da, a)},
                                    {DNNL_ARG_SRC_1, mem(db, b)},
                                    {DNNL_ARG_DST, mem(da, c)}});
  strm().wait();
}

// Batch normalization with batch statistics (PyTorch training mode): per channel (dim 1) mean
// and biased variance over every other dim, eps inside the square root, then gamma / beta
// (oneDNN batch normalization, forward_training: it computes and outputs the statistics).
void batchnorm(const float* src, float* dst, const memory::dims& d, float eps,
               const float* gamma, const float* beta) {
  if (count(d) == 0) return;
  const auto flags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc pd(
      {prop_kind::forward_training, md(d), eps, flags}, eng());
  std::vector<float> mean(d[1]), var(d[1]);
  dnnl::batch_normalization_forward(pd).execute(
      strm(), {{DNNL_ARG_SRC, mem(d, src)},
               {DNNL_ARG_DST, mem(d, dst)},
               {DNNL_ARG_SCALE, mem({d[1]}, gamma)},
               {DNNL_ARG_SHIFT, mem({d[1]}, beta)},
               {DNNL_ARG_MEAN, memory(pd.mean_desc(), eng(), mean.data())},
               {DNNL_ARG_VARIANCE, memory(pd.variance_desc(), eng(), var.data())}});
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

void conv2d_activation_batchnorm(const float* x, const float* weight, const float* conv_bias,
                                 const float* gamma, const float* beta, float* y, int64_t N,
                                 int64_t C, int64_t H, int64_t W, int64_t K, int64_t R, int64_t S,
                                 float eps) {
  const int64_t P = H - R + 1, Q = W - S + 1;
  const int64_t n = N * K * P * Q;
  if (n == 0) return;
  float *z = buf(0, n), *t = buf(1, n);
  conv(false, x, {N, C, H, W}, weight, {K, C, R, S}, tag::oihw, conv_bias, z,
       {N, K, P, Q}, {1, 1}, {0, 0});               // self.conv(x)
  eltwise(algorithm::eltwise_soft_relu, z, t, n);   // F.softplus(x)
  eltwise(algorithm::eltwise_tanh, t, t, n);        // torch.tanh(...)
  binary(algorithm::binary_mul, t, {N, K, P, Q}, z, {N, K, P, Q}, t);
  batchnorm(t, y, {N, K, P, Q}, eps, gamma, beta);  // self.bn(x)
}
