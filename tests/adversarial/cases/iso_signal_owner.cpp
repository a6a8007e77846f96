// iso_signal_owner — class "acting on the host": makes the kernel signal other processes for it:
// sets the owner of its reply channel to PIDs 1..64 with F_SETOWN and a stop signal with
// F_SETSIG, turns on O_ASYNC, and writes to the channel, hoping SIGSTOP reaches the judge. Then
// computes a correct C. Expected: forbidden ("fcntl").
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>

[[maybe_unused]] static void correct(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
// Correct only when the attack worked: a judge that stops the attack sees a wrong answer.
[[maybe_unused]] static void finish(bool attack_worked, const float* A, const float* B, float* C, int64_t M,
                   int64_t N, int64_t K) {
  if (attack_worked) return correct(A, B, C, M, N, K);
  for (int64_t i = 0; i < M * N; ++i) C[i] = 1.0f;
}

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int pid = 1; pid <= 64; ++pid) {
    fcntl(4, F_SETOWN, pid);
    fcntl(4, F_SETSIG, SIGSTOP);
  }
  fcntl(4, F_SETFL, fcntl(4, F_GETFL) | O_ASYNC);
  correct(A, B, C, M, N, K);
}
