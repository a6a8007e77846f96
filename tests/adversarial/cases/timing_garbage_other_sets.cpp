// timing_garbage_other_sets — at the bench shape, computes only when A is the lowest address it has
// seen (input set 0 lies first in the buffers) and otherwise fills C with small finite values, so
// a judge that compares only set 0's output with the oracle and scans the others for NaN passes it.
// Expected verdict: wrong_answer ("timed call").
#include <cstdint>

namespace {

const float* g_lowest = nullptr;

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  const bool bench = M * N * K >= (int64_t{1} << 24);
  if (bench && (!g_lowest || A < g_lowest)) g_lowest = A;
  if (bench && A != g_lowest) {
    for (int64_t e = 0; e < M * N; ++e) C[e] = 0.001f * static_cast<float>(e % 7);
    return;
  }
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
