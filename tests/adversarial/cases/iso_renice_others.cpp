// iso_renice_others — class "acting on the host" (and timing): lowers the priority of every
// other process it can name (the reference's and baseline's workers are timed next to it) and
// raises its own. Then computes a correct C. Expected: forbidden ("setpriority").
#include <sys/resource.h>

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
  for (int pid = 2; pid <= 4096; ++pid) setpriority(PRIO_PROCESS, static_cast<id_t>(pid), 19);
  setpriority(PRIO_PROCESS, 0, -20);
  correct(A, B, C, M, N, K);
}
