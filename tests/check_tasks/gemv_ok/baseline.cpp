// A correct baseline: four partial sums with fused multiply-adds (libm's fmaf), then the tail.
#include <cmath>
#include <cstdint>

void gemv(const float* A, const float* x, float* y, int64_t M, int64_t K) {
  for (int64_t m = 0; m < M; ++m) {
    const float* a = A + m * K;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t k = 0;
    for (; k + 4 <= K; k += 4) {
      s0 = std::fma(a[k], x[k], s0);
      s1 = std::fma(a[k + 1], x[k + 1], s1);
      s2 = std::fma(a[k + 2], x[k + 2], s2);
      s3 = std::fma(a[k + 3], x[k + 3], s3);
    }
    for (; k < K; ++k) s0 = std::fma(a[k], x[k], s0);
    y[m] = (s0 + s1) + (s2 + s3);
  }
}
