// timing_memo_pointer — at the bench shape, computes each (A, B, C) address triple once and keeps
// the result; every later call at a known address copies the stored result back. The test
// shapes are computed honestly.
// Expected verdict: wrong_answer ("timed call"). The judge changes the bytes behind every input
// set after each call on it (the set's other variant), so a result stored for an address is
// stale the next time that address is used, and every timed call is checked against the oracle.
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>

namespace {

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

std::map<std::tuple<const float*, const float*, float*>, std::vector<float>> g_seen;

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  if (M * N * K < (int64_t{1} << 24)) return compute(A, B, C, M, N, K);
  auto key = std::make_tuple(A, B, C);
  auto it = g_seen.find(key);
  if (it != g_seen.end()) {
    std::memcpy(C, it->second.data(), it->second.size() * sizeof(float));
    return;
  }
  compute(A, B, C, M, N, K);
  g_seen[key].assign(C, C + M * N);
}
