// Wrong baseline: unrolled by four and missing the tail loop, so K % 4 trailing terms are
// dropped. It compiles, runs, and is right only when K is a multiple of 4.
#include <cstdint>

void gemv(const float* A, const float* x, float* y, int64_t M, int64_t K) {
  for (int64_t m = 0; m < M; ++m) {
    const float* a = A + m * K;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (int64_t k = 0; k + 4 <= K; k += 4) {
      s0 += a[k] * x[k];
      s1 += a[k + 1] * x[k + 1];
      s2 += a[k + 2] * x[k + 2];
      s3 += a[k + 3] * x[k + 3];
    }
    y[m] = (s0 + s1) + (s2 + s3);
  }
}
