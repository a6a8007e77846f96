#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void f64_layernorm(const T* x, const T* g, T* y, int64_t N, int64_t D, T eps) {
  using A = kf::acc_t<T>;
  for (int64_t n = 0; n < N; ++n) {
    A mu = 0, var = 0;
    for (int64_t d = 0; d < D; ++d) mu += A(x[n * D + d]);
    mu /= A(D);
    for (int64_t d = 0; d < D; ++d) var += (A(x[n * D + d]) - mu) * (A(x[n * D + d]) - mu);
    var /= A(D);
    const A r = A(1) / std::sqrt(var + A(eps));
    for (int64_t d = 0; d < D; ++d) y[n * D + d] = T((A(x[n * D + d]) - mu) * r * A(g[d]));
  }
}
