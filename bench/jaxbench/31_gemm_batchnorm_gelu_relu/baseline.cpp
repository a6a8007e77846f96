// Library baseline for 31_gemm_batchnorm_gelu_relu: the PyTorch module run eagerly on oneDNN,
// one library call per op: nn.Linear as addmm (bias broadcast, then dnnl_sgemm with beta = 1),
// nn.BatchNorm1d in training mode (oneDNN batch normalization computing the batch statistics),
// F.gelu (eltwise_gelu_erf) and torch.relu (eltwise_relu).
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

// nn.Linear the way PyTorch runs it on CPU (addmm): C = bias broadcast over the rows, then
// C += A[M,K] @ W[N,K]^T with oneDNN's f32 GEMM (dnnl_sgemm, row-major).
void linear(const float* A, const float* W, const float* bias, float* C, int64_t M, int64_t K,
            int64_t N) {
  if (M == 0 || N == 0) return;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) C[m * N + n] = bias ? bias[n] : 0.0f;
  if (K == 0) return;
  dnnl_sgemm('N', 'T', M, N, K, 1.0f, A, K, W, K, bias ? 1.0f : 0.0f, C, N);
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

}  // namespace

void gemm_batchnorm_gelu_relu(const float* x, const float* W, const float* bias,
                              const float* gamma, const float* beta, float* y, int64_t B,
                              int64_t I, int64_t O, float eps) {
  if (B * O == 0) return;
  linear(x, W, bias, y, B, I, O);                     // self.gemm(x)
  batchnorm(y, y, {B, O}, eps, gamma, beta);          // self.batch_norm(x), training mode
  eltwise(algorithm::eltwise_gelu_erf, y, y, B * O);  // F.gelu(x)
  eltwise(algorithm::eltwise_relu, y, y, B * O);      // torch.relu(x)
}
