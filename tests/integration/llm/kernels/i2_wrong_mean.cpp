// Wrong: the mean over D - 1 values (a classic slip), which the judge must catch.
#include <cmath>
#include <cstdint>

void rmsnorm(const float* x, const float* w, float* y, int64_t N, int64_t D, float eps) {
  for (int64_t n = 0; n < N; ++n) {
    const float* xr = x + n * D;
    float* yr = y + n * D;
    float ss = 0;
    for (int64_t d = 0; d < D; ++d) ss += xr[d] * xr[d];
    const float r = 1.0f / std::sqrt(ss / float(D > 1 ? D - 1 : 1) + eps);
    for (int64_t d = 0; d < D; ++d) yr[d] = xr[d] * r * w[d];
  }
}
