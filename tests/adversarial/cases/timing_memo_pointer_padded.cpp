// timing_memo_pointer_padded — the memoizer of timing_memo_pointer, padded: a call that returns a
// stored result first waits (busy) for 40% of the time its honest computation took, so its time
// stays above the roofline's "faster than the machine allows" bound and it would pass as a
// 2.5x speedup over itself if only the time were questioned.
// Expected verdict: wrong_answer ("timed call"): the stored results are stale, whatever the
// timing says.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

void compute(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
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

std::map<const float*, std::vector<float>> g_seen;
Clock::duration g_honest{};

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  if (M * N * K < (int64_t{1} << 24)) return compute(A, B, C, M, N, K);
  const auto start = Clock::now();
  auto it = g_seen.find(A);
  if (it != g_seen.end()) {
    std::memcpy(C, it->second.data(), it->second.size() * sizeof(float));
    while (Clock::now() - start < g_honest * 2 / 5) {
    }
    return;
  }
  compute(A, B, C, M, N, K);
  g_honest = Clock::now() - start;
  g_seen[A].assign(C, C + M * N);
}
