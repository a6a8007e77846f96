// timing_first_set_only — at the bench shape, computes honestly only on the first input address it
// sees (the warm-up's, which the judge checks in full); on any other address it writes finite,
// plausible garbage: that first answer scaled by 1.01.
// Expected verdict: wrong_answer ("timed call"): every timed call's output is checked against the
// oracle's answer for the input set it read, not only the warm-up set's.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace {

const float* g_first = nullptr;
std::vector<float> g_answer;

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  const bool bench = M * N * K >= (int64_t{1} << 24);
  if (bench && g_first && A != g_first && g_answer.size() == static_cast<std::size_t>(M * N)) {
    for (int64_t e = 0; e < M * N; ++e) C[e] = g_answer[static_cast<std::size_t>(e)] * 1.01f;
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
  if (bench && !g_first) {
    g_first = A;
    g_answer.assign(C, C + M * N);
  }
}
