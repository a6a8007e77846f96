// Library baseline for 23_matmul_sum_max_avgpool_logsumexp_logsumexp: the PyTorch module run
// eagerly, one library call per op: nn.Linear as addmm (bias broadcast, then dnnl_sgemm with
// beta = 1), torch.sum (oneDNN reduction), torch.max and torch.mean over the size-1 dim (copies,
// as PyTorch reduces over nothing), and each torch.logsumexp as a plain loop (oneDNN has none).
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

// dst = reduction of src over the dims where dst has extent 1 (oneDNN reduction). A reduction
// over nothing (equal dims) is a copy, as in PyTorch.
void reduce(algorithm alg, const float* src, const memory::dims& ds, float* dst,
            const memory::dims& dd) {
  if (count(dd) == 0) return;
  if (ds == dd) {
    for (int64_t i = 0; i < count(ds); ++i) dst[i] = src[i];
    return;
  }
  dnnl::reduction::primitive_desc pd({alg, md(ds), md(dd), 0.0f, 0.0f}, eng());
  dnnl::reduction(pd).execute(strm(), {{DNNL_ARG_SRC, mem(ds, src)}, {DNNL_ARG_DST, mem(dd, dst)}});
  strm().wait();
}

// torch.logsumexp over the last dim of src[rows, cols]: oneDNN has no logsumexp, so this is a
// plain loop over each row (max, then log of the sum of exp(x - max), plus max), as PyTorch's
// composite does it; std::exp / std::log are accurate where oneDNN's eltwise exp/log
// approximations (~1e-6 absolute) are not.
void logsumexp_rows(const float* src, float* dst, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* v = src + r * cols;
    float m = v[0];
    for (int64_t c = 1; c < cols; ++c) m = v[c] > m ? v[c] : m;
    float s = 0.0f;
    for (int64_t c = 0; c < cols; ++c) s += std::exp(v[c] - m);
    dst[r] = std::log(s) + m;
  }
}

}  // namespace

void matmul_sum_max_avgpool_logsumexp_logsumexp(const float* x, const float* W, const float* bias,
                                                float* y, int64_t B, int64_t I, int64_t O) {
  if (B == 0) return;
  float *z = buf(0, B * O), *s = buf(1, B), *m = buf(2, B), *a = buf(3, B), *l = buf(4, B);
  linear(x, W, bias, z, B, I, O);                           // self.linear(x)
  reduce(algorithm::reduction_sum, z, {B, O}, s, {B, 1});   // torch.sum
  reduce(algorithm::reduction_max, s, {B, 1}, m, {B, 1});   // torch.max
  reduce(algorithm::reduction_mean, m, {B, 1}, a, {B, 1});  // torch.mean
  logsumexp_rows(a, l, B, 1);                               // torch.logsumexp
  logsumexp_rows(l, y, B, 1);                               // torch.logsumexp
}
