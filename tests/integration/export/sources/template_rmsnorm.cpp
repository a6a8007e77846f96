// A written kernel for tests/integration/export_cli_test.cpp: a template over its element type
// (the judge instantiates it at the task's types, and so must the export), it includes
// kforge/kernel.h (the export must build without kforge's include directory), and it has helpers
// of its own with external linkage, which the export must keep inside its file. Eight partial
// sums and one reciprocal square root per row: about twice as fast as the reference.
#include <kforge/kernel.h>

#include <cmath>
#include <cstdint>

template <typename A, typename T>
A sum_of_squares(const T* r, int64_t n) {
  A part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t d = 0;
  for (; d + 8 <= n; d += 8)
    for (int k = 0; k < 8; ++k) part[k] += A(r[d + k]) * A(r[d + k]);
  A ss = 0;
  for (; d < n; ++d) ss += A(r[d]) * A(r[d]);
  for (int k = 0; k < 8; ++k) ss += part[k];
  return ss;
}

float inverse_rms(float ss, int64_t n, float eps) {
  return 1.0f / std::sqrt(ss / float(n) + eps);
}

template <typename T>
void rmsnorm(const T* x, const T* w, T* y, int64_t N, int64_t D, kf::acc_t<T> eps) {
  using A = kf::acc_t<T>;
  for (int64_t n = 0; n < N; ++n) {
    const T* xr = x + n * D;
    T* yr = y + n * D;
    const A r = inverse_rms(sum_of_squares<A>(xr, D), D, eps);
    for (int64_t e = 0; e < D; ++e) yr[e] = T(A(xr[e]) * r * A(w[e]));
  }
}
