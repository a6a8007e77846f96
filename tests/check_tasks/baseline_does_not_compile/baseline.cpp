// Broken baseline: calls a BLAS routine whose header it never includes (and whose library the
// task does not link), so it does not compile.
#include <cstdint>

void gemv(const float* A, const float* x, float* y, int64_t M, int64_t K) {
  cblas_sgemv(CblasRowMajor, CblasNoTrans, M, K, 1.0f, A, K, x, 1, 0.0f, y, 1);
}
