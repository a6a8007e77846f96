// iso_sysv_shm_leak — class "acting on the host": creates 1 GiB System V shared memory segments
// that would outlive the worker, then computes a correct C. Expected: forbidden ("shmget"); the
// worker's own IPC namespace would free them anyway.
#include <sys/ipc.h>
#include <sys/shm.h>

#include <cstddef>
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
  for (int i = 0; i < 4; ++i) {
    int id = shmget(IPC_PRIVATE, size_t{1} << 30, IPC_CREAT | 0600);
    if (id >= 0) {
      void* p = shmat(id, nullptr, 0);
      if (p != reinterpret_cast<void*>(-1)) static_cast<char*>(p)[0] = 1;
    }
  }
  correct(A, B, C, M, N, K);
}
