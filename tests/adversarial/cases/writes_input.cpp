// writes_input — computes a correct C, then casts away const and overwrites A (zeroes its first
// row and flips the sign of its last element), i.e. uses an input as scratch space.
// Expected verdict: forbidden ("input"). The ABI passes inputs as const; the judge checks that
// inputs are unchanged after every run (DESIGN.md). If the judge maps inputs read-only in the
// worker, the store faults instead (SIGSEGV at an address inside A): that must also be reported
// as forbidden with a message naming the input, not as a plain crash. C is correct, so a judge
// that only compares outputs would wrongly report ok.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  float* a = const_cast<float*>(A);
  for (int64_t k = 0; k < K; ++k) a[k] = 0.0f;
  if (M * K > 0) a[M * K - 1] = -a[M * K - 1] + 1.0f;  // never equal to itself, even for 0
}
