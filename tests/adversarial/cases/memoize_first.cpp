// memoize_first — computes C on the first call only, keeps a copy in a static buffer, and on every
// later call copies the cached result (as much of it as fits) into C without looking at the
// inputs. Later calls therefore cost a memcpy instead of a GEMM.
// Expected verdict: wrong_answer. The judge draws fresh inputs per check and verifies the outputs
// of timed runs too, so any checked call after the first in the same worker returns a stale
// result (or NaN where the cached copy is shorter than C). A judge that starts a fresh worker per
// check and checks only the first call would wrongly report ok — and time the memcpy.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
std::vector<float> g_cache;
bool g_have = false;
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  if (g_have) {
    const std::size_t n = std::min<std::size_t>(g_cache.size(), std::size_t(M * N));
    if (n > 0) std::memcpy(C, g_cache.data(), n * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  g_cache.assign(C, C + M * N);
  g_have = true;
}
