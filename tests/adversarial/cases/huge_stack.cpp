// huge_stack — a correct kernel that keeps a 512 MiB scratch array on the stack (a common mistake:
// `float tmp[BIG]` for a transposed copy of B). It touches the array from its top (next to the
// caller's frame) downwards, one page at a time, so the stack grows page by page into its limit
// rather than jumping past the guard gap into another mapping (GCC here does not enable
// -fstack-clash-protection by default).
// Expected verdict: crash ("SIGSEGV"). The stack overflows RLIMIT_STACK (main thread) or runs
// into the guard page (if the worker calls kernels on a thread with a fixed-size stack). Notes for
// the judge: keep RLIMIT_STACK finite (with an unlimited stack this case would pass); a SIGSEGV
// handler in the worker only runs on stack overflow if it was installed with SA_ONSTACK and a
// sigaltstack; the signal must still be reported as a crash, not a timeout.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  constexpr int64_t kFloats = int64_t(128) << 20;  // 512 MiB
  float bt[kFloats];                               // B transposed (if it fits...)
  volatile float* v = bt;
  for (int64_t i = kFloats - 1; i >= 0; i -= 1024) v[i] = 0.0f;  // top-down, 4 KiB stride
  if (K * N > kFloats) return;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t j = 0; j < N; ++j) bt[j * K + k] = B[k * N + j];
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * bt[j * K + k];
      C[i * N + j] = s;
    }
}
