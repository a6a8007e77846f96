// Reference for 17_triangle_multiplication: AlphaFold2's triangle multiplicative update using
// "outgoing" edges, on a pair representation act [N, N, C] (no padding mask: all ones).
//   xn      = LayerNorm(act) * ln_in_scale + ln_in_offset                  (over c, eps)
//   left    = (xn @ w_lp + b_lp) * sigmoid(xn @ w_lg + b_lg)              [N, N, CI]
//   right   = (xn @ w_rp + b_rp) * sigmoid(xn @ w_rg + b_rg)              [N, N, CI]
//   t[i,j,d] = sum_k left[i,k,d] * right[j,k,d]                           ('ikc,jkc->ijc')
//   tn      = LayerNorm(t) * ln_c_scale + ln_c_offset                      (over d, eps)
//   out     = (tn @ w_o + b_o) * sigmoid(xn @ w_g + b_g)                  [N, N, C]
// LayerNorm(z) = (z - mean) / sqrt(var + eps), var the biased variance computed from centered
// values. Every sum runs over its index in ascending order.
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

namespace tri_ref {

// Row-wise LayerNorm of z[R, C] (in Acc), written to out.
template <typename Acc, typename T>
void layer_norm(const Acc* z, Acc* out, const T* scale, const T* offset, int64_t R, int64_t C,
                Acc eps) {
  for (int64_t r = 0; r < R; ++r) {
    const Acc* zr = z + r * C;
    Acc mu = 0;
    for (int64_t c = 0; c < C; ++c) mu += zr[c];
    mu = mu / Acc(C);
    Acc var = 0;
    for (int64_t c = 0; c < C; ++c) var += (zr[c] - mu) * (zr[c] - mu);
    var = var / Acc(C);
    const Acc sd = std::sqrt(var + eps);
    for (int64_t c = 0; c < C; ++c)
      out[r * C + c] = (zr[c] - mu) / sd * Acc(scale[c]) + Acc(offset[c]);
  }
}

// out[R, D] = z[R, C] @ w[C, D] + b, k-outer loop with a row accumulator.
template <typename Acc, typename T>
void linear(const Acc* z, const T* w, const T* b, Acc* out, int64_t R, int64_t C, int64_t D) {
  for (int64_t r = 0; r < R; ++r) {
    Acc* o = out + r * D;
    for (int64_t d = 0; d < D; ++d) o[d] = 0;
    for (int64_t c = 0; c < C; ++c) {
      const Acc a = z[r * C + c];
      for (int64_t d = 0; d < D; ++d) o[d] += a * Acc(w[c * D + d]);
    }
    for (int64_t d = 0; d < D; ++d) o[d] += Acc(b[d]);
  }
}

template <typename Acc>
Acc sigmoid(Acc z) {
  return Acc(1) / (Acc(1) + std::exp(-z));
}

}  // namespace tri_ref

template <typename T>
void triangle_multiplication(const T* act, const T* ln_in_scale, const T* ln_in_offset,
                             const T* w_lp, const T* b_lp, const T* w_lg, const T* b_lg,
                             const T* w_rp, const T* b_rp, const T* w_rg, const T* b_rg,
                             const T* ln_c_scale, const T* ln_c_offset, const T* w_o,
                             const T* b_o, const T* w_g, const T* b_g, T* out, int64_t N,
                             int64_t C, int64_t CI, kf::acc_t<T> eps) {
  using Acc = kf::acc_t<T>;
  using namespace tri_ref;
  const int64_t R = N * N;
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };
  std::vector<Acc> a(n(R * C)), xn(n(R * C));
  for (int64_t i = 0; i < R * C; ++i) a[i] = Acc(act[i]);
  layer_norm(a.data(), xn.data(), ln_in_scale, ln_in_offset, R, C, eps);
  std::vector<Acc> left(n(R * CI)), right(n(R * CI)), gate(n(R * CI));
  linear(xn.data(), w_lp, b_lp, left.data(), R, C, CI);
  linear(xn.data(), w_lg, b_lg, gate.data(), R, C, CI);
  for (int64_t i = 0; i < R * CI; ++i) left[i] = left[i] * sigmoid(gate[i]);
  linear(xn.data(), w_rp, b_rp, right.data(), R, C, CI);
  linear(xn.data(), w_rg, b_rg, gate.data(), R, C, CI);
  for (int64_t i = 0; i < R * CI; ++i) right[i] = right[i] * sigmoid(gate[i]);
  // Outgoing edges: t[i, j, :] = sum_k left[i, k, :] * right[j, k, :].
  std::vector<Acc> t(n(R * CI)), tn(n(R * CI));
  for (int64_t i = 0; i < N; ++i)
    for (int64_t j = 0; j < N; ++j) {
      Acc* tij = t.data() + (i * N + j) * CI;
      for (int64_t d = 0; d < CI; ++d) tij[d] = 0;
      for (int64_t k = 0; k < N; ++k) {
        const Acc* l = left.data() + (i * N + k) * CI;
        const Acc* r = right.data() + (j * N + k) * CI;
        for (int64_t d = 0; d < CI; ++d) tij[d] += l[d] * r[d];
      }
    }
  layer_norm(t.data(), tn.data(), ln_c_scale, ln_c_offset, R, CI, eps);
  std::vector<Acc> o(n(R * C)), g(n(R * C));
  linear(tn.data(), w_o, b_o, o.data(), R, CI, C);
  linear(xn.data(), w_g, b_g, g.data(), R, C, C);
  for (int64_t i = 0; i < R * C; ++i) out[i] = T(o[i] * sigmoid(g[i]));
}
