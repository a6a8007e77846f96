// Repaired: `inv` declared where it is computed.
#include <cmath>
#include <cstdint>

void rmsnorm(const float* x, const float* w, float* y, int64_t N, int64_t D, float eps) {
  for (int64_t n = 0; n < N; ++n) {
    const float* xr = x + n * D;
    float ss = 0;
    for (int64_t d = 0; d < D; ++d) ss += xr[d] * xr[d];
    const float inv = 1.0f / std::sqrt(ss / float(D) + eps);
    for (int64_t d = 0; d < D; ++d) y[n * D + d] = xr[d] * inv * w[d];
  }
}
