// Correct but slow: the sum of squares is computed twice per row, in double.
#include <cmath>
#include <cstdint>

void rmsnorm(const float* x, const float* w, float* y, int64_t N, int64_t D, float eps) {
  for (int64_t n = 0; n < N; ++n) {
    const float* xr = x + n * D;
    float* yr = y + n * D;
    double ss = 0, again = 0;
    for (int64_t d = 0; d < D; ++d) ss += double(xr[d]) * xr[d];
    for (int64_t d = 0; d < D; ++d) again += double(xr[d]) * xr[d];
    const double rms = std::sqrt((ss + again) / (2.0 * double(D)) + eps);
    for (int64_t d = 0; d < D; ++d) yr[d] = float(double(xr[d]) / rms * w[d]);
  }
}
