// timing_memo_sampled — at the bench shape, keys a cache on the dims and eight sampled elements
// of A and of B (not on addresses), so it computes each distinct input once even when the judge
// moves inputs between buffers, and copies the stored result for a repeat.
// Expected verdict: wrong_answer ("timed call"). Each input set alternates between two contents
// that differ in one element in 64 of every input: the sixteen sampled elements almost never see
// the difference, so the cache hands one content's answer to the other, and the timed call's
// output is checked against the oracle's answer for the content it was given.
#include <cstdint>
#include <cstring>
#include <map>
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

uint64_t key(const float* A, const float* B, int64_t M, int64_t N, int64_t K) {
  uint64_t h = static_cast<uint64_t>(M * 1000003 + N * 1009 + K);
  for (int s = 0; s < 8; ++s) {
    uint32_t a, b;
    std::memcpy(&a, A + (M * K - 1) * s / 7, 4);
    std::memcpy(&b, B + (K * N - 1) * s / 7, 4);
    h = (h ^ a) * 0x100000001b3ull;
    h = (h ^ b) * 0x100000001b3ull;
  }
  return h;
}

std::map<uint64_t, std::vector<float>> g_cache;

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  if (M * N * K < (int64_t{1} << 24)) return compute(A, B, C, M, N, K);
  const uint64_t k = key(A, B, M, N, K);
  auto it = g_cache.find(k);
  if (it != g_cache.end()) {
    std::memcpy(C, it->second.data(), it->second.size() * sizeof(float));
    return;
  }
  compute(A, B, C, M, N, K);
  g_cache[k].assign(C, C + M * N);
}
