// iso_file_handle_write — class "acting on the host": gets a handle of a host file with
// name_to_handle_at and reopens it for writing with open_by_handle_at (which bypasses path
// checks), then computes a correct C. Expected: forbidden (neither call is on the allowlist).
#include <fcntl.h>
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
  struct {
    file_handle h;
    unsigned char bytes[128];
  } fh{};
  fh.h.handle_bytes = 128;
  int mount_id = 0;
  if (name_to_handle_at(AT_FDCWD, "/etc/hostname", &fh.h, &mount_id, 0) == 0) {
    int fd = open_by_handle_at(AT_FDCWD, &fh.h, O_WRONLY);
    if (fd >= 0) {
      ssize_t ignored = write(fd, "x", 1);
      (void)ignored;
    }
  }
  correct(A, B, C, M, N, K);
}
