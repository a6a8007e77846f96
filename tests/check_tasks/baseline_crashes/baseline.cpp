// Broken baseline: its workspace exists only for M <= 32; a larger M gets a null workspace,
// which it does not check, and the first store through it crashes.
#include <cstdint>

namespace {
float small_workspace[32];
float* workspace(int64_t M) { return M <= 32 ? small_workspace : nullptr; }
}  // namespace

void gemv(const float* A, const float* x, float* y, int64_t M, int64_t K) {
  float* volatile ws = workspace(M);
  for (int64_t m = 0; m < M; ++m) {
    float s = 0;
    for (int64_t k = 0; k < K; ++k) s += A[m * K + k] * x[k];
    ws[m] = s;
    y[m] = ws[m];
  }
}
