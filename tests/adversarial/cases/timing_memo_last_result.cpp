// timing_memo_last_result — at the bench shape, computes its first call and from then on returns
// its previous output without reading the inputs at all (the judge used to time kernels of 5 ms
// or more on the warm-up's input set, over and over).
// Expected verdict: wrong_answer ("timed call"): every timed batch starts on an input set other
// than the previous call's, so the previous output answers another input.
#include <cstdint>
#include <cstring>
#include <vector>

namespace {

std::vector<float> g_last;

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  const bool bench = M * N * K >= (int64_t{1} << 24);
  if (bench && g_last.size() == static_cast<size_t>(M * N)) {
    std::memcpy(C, g_last.data(), g_last.size() * sizeof(float));
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
  if (bench) g_last.assign(C, C + M * N);
}
