// Reference for 09_swiglu_mlp (Llama feed-forward block):
//   g = x @ Wg, u = x @ Wu            (x[Ntok,Dm], Wg[Dm,F], Wu[Dm,F]; g, u [Ntok,F])
//   h = silu(g) * u, silu(z) = z / (1 + exp(-z))
//   y = h @ Wd                        (Wd[F,Dm], y[Ntok,Dm])
// Each matmul sums over its inner index in ascending order (i-k-j loops with a row accumulator).
#include <kforge/kernel.h>

#include <cmath>
#include <vector>

template <typename T>
void swiglu_mlp(const T* x, const T* Wg, const T* Wu, const T* Wd, T* y, int64_t Ntok, int64_t Dm,
                int64_t F) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> g(static_cast<size_t>(F)), u(static_cast<size_t>(F));
  std::vector<Acc> out(static_cast<size_t>(Dm));
  for (int64_t t = 0; t < Ntok; ++t) {
    // g[t,:] = x[t,:] @ Wg and u[t,:] = x[t,:] @ Wu
    for (int64_t f = 0; f < F; ++f) g[f] = 0, u[f] = 0;
    for (int64_t d = 0; d < Dm; ++d) {
      const Acc xv = Acc(x[t * Dm + d]);
      for (int64_t f = 0; f < F; ++f) g[f] += xv * Acc(Wg[d * F + f]);
      for (int64_t f = 0; f < F; ++f) u[f] += xv * Acc(Wu[d * F + f]);
    }
    // h[t,:] = silu(g) * u, stored back into g
    for (int64_t f = 0; f < F; ++f) g[f] = g[f] / (Acc(1) + std::exp(-g[f])) * u[f];
    // y[t,:] = h[t,:] @ Wd
    for (int64_t d = 0; d < Dm; ++d) out[d] = 0;
    for (int64_t f = 0; f < F; ++f) {
      const Acc hv = g[f];
      for (int64_t d = 0; d < Dm; ++d) out[d] += hv * Acc(Wd[f * Dm + d]);
    }
    for (int64_t d = 0; d < Dm; ++d) y[t * Dm + d] = T(out[d]);
  }
}
