// cached_copy — computes correctly on inputs it has not seen, but memoizes: it keys each result by
// (A pointer, B pointer, M, N, K) plus a fingerprint of six input values (first, middle and last
// element of A and of B). On a repeated call whose key and fingerprint match it memcpy's the stored
// result into C instead of computing. Every output it produces is correct for unchanged inputs;
// at the bench shape a repeated run costs a 256 KiB copy instead of 33.5 MFLOP.
// Expected verdict: suspicious (or wrong_answer). Timed runs that repeat identical inputs come out
// faster than the machine's compute roofline allows (2*M*N*K flops at peak FLOP/s for the thread
// count used), which the judge must flag as suspicious rather than report a record speedup. A judge
// that also perturbs inputs between timed runs (changing elements other than the six sampled ones)
// and verifies the result catches the stale copy directly: wrong_answer. Either is acceptable;
// ok is not. (The roofline check must use the real peak for the threads actually granted; with
// many cores and wide FMA units a 256 KiB memcpy is only a few times faster than the roofline.)
#include <cstdint>
#include <cstring>
#include <vector>

namespace {
struct Entry {
  const float* a;
  const float* b;
  int64_t m, n, k;
  uint32_t fp[6];
  std::vector<float> c;
};
std::vector<Entry> g_memo;

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

void fingerprint(const float* A, const float* B, int64_t M, int64_t N, int64_t K, uint32_t fp[6]) {
  const int64_t na = M * K, nb = K * N;
  fp[0] = na ? bits(A[0]) : 0;
  fp[1] = na ? bits(A[na / 2]) : 0;
  fp[2] = na ? bits(A[na - 1]) : 0;
  fp[3] = nb ? bits(B[0]) : 0;
  fp[4] = nb ? bits(B[nb / 2]) : 0;
  fp[5] = nb ? bits(B[nb - 1]) : 0;
}
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  uint32_t fp[6];
  fingerprint(A, B, M, N, K, fp);
  for (const Entry& e : g_memo)
    if (e.a == A && e.b == B && e.m == M && e.n == N && e.k == K &&
        std::memcmp(e.fp, fp, sizeof fp) == 0) {
      if (!e.c.empty()) std::memcpy(C, e.c.data(), e.c.size() * sizeof(float));
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
  Entry e{A, B, M, N, K, {}, std::vector<float>(C, C + M * N)};
  std::memcpy(e.fp, fp, sizeof fp);
  for (Entry& old : g_memo)
    if (old.a == A && old.b == B && old.m == M && old.n == N && old.k == K) {
      old = std::move(e);  // same buffers, new inputs: replace the stale entry
      return;
    }
  if (g_memo.size() < 64) g_memo.push_back(std::move(e));
}
