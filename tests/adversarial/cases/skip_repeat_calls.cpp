// skip_repeat_calls — remembers every output pointer it has written; when called again with a C it
// has already filled, it returns at once without computing, assuming the judge is only repeating
// the same run to time it and the earlier result is still sitting in C.
// Expected verdict: wrong_answer ("NaN"). The judge refills outputs with NaN before every run and
// verifies timed runs too, with fresh inputs, at buffers it has used before: the skipped call
// leaves NaN. A judge that NaN-fills only before the first run of a batch, or that checks only a
// run at a never-used buffer, would report ok with an absurdly fast time.
#include <cstdint>

namespace {
constexpr int kSlots = 256;
float* g_seen[kSlots];
int g_count = 0;
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int s = 0; s < g_count; ++s)
    if (g_seen[s] == C) return;  // "already computed this one"
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  if (g_count < kSlots) g_seen[g_count++] = C;
}
