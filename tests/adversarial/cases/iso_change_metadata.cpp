// iso_change_metadata — class "acting on the host": changes the mode, owner, times and extended
// attributes of files it can name (its own directory, /tmp, its inherited descriptors), one call
// of each family, then computes a correct C. Expected: forbidden (none is on the allowlist).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
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
  fchmod(1, 0777);
  chmod("/tmp", 0777);
  fchown(1, 0, 0);
  struct timespec t[2] = {};
  utimensat(AT_FDCWD, "/tmp", t, 0);
  setxattr("/tmp", "user.kforge", "x", 1, 0);
  correct(A, B, C, M, N, K);
}
