// iso_new_mount_api — class "acting on the host": mounts a tmpfs with the new mount API
// (fsopen, fsconfig, fsmount, move_mount) through raw system calls, then computes a correct C.
// Expected: forbidden ("fsopen").
#include <fcntl.h>
#include <sys/syscall.h>
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
  long fs = syscall(SYS_fsopen, "tmpfs", 0);
  if (fs >= 0) {
    syscall(SYS_fsconfig, fs, 6 /*FSCONFIG_CMD_CREATE*/, nullptr, nullptr, 0);
    long mnt = syscall(SYS_fsmount, fs, 0, 0);
    syscall(SYS_move_mount, mnt, "", AT_FDCWD, "/tmp", 4 /*MOVE_MOUNT_F_EMPTY_PATH*/);
  }
  correct(A, B, C, M, N, K);
}
