// Library baseline for 26_bmm_instancenorm_sum_residualadd_multiply: the PyTorch module run
// eagerly on oneDNN, one library call per op: nn.Linear as addmm (bias broadcast, then
// dnnl_sgemm with beta = 1), the instance norm of the [B,1,1,O] view (oneDNN has no instance
// norm; it is a layer normalization of each row, without scale and shift), x + y and x * y
// (oneDNN binary primitives).
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

}  // namespace

void bmm_instancenorm_sum_residualadd_multiply(const float* x, const float* y, const float* W,
                                               const float* bias, float* out, int64_t B,
                                               int64_t I, int64_t O, float eps) {
  if (B * O == 0) return;
  linear(x, W, bias, out, B, I, O);                            // self.bmm(x)
  layernorm(out, out, B, O, eps);  // self.instance_norm on [B,1,1,O]: per-row statistics
  binary(algorithm::binary_add, out, {B, O}, y, {B, O}, out);  // x + y
  binary(algorithm::binary_mul, out, {B, O}, y, {B, O}, out);  // x * y
}
