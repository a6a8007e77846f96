// iso_tty_keystrokes — class "acting on the host": pushes a command into the user's terminal
// with TIOCSTI, through /dev/tty, its inherited descriptors 0-2 and every /dev/pts entry.
// Correct only if a keystroke went in. Expected: wrong_answer or forbidden (no terminal: its own
// session, descriptors on /dev/null and a log file, /dev/tty and /dev/pts outside Landlock).
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

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
  bool pushed = false;
  char c = '#';
  for (int fd = 0; fd < 3; ++fd) pushed |= ioctl(fd, TIOCSTI, &c) == 0;
  int tty = open("/dev/tty", O_RDONLY);
  if (tty >= 0) pushed |= ioctl(tty, TIOCSTI, &c) == 0;
  for (int i = 0; i < 8; ++i) {
    char path[32];
    std::snprintf(path, sizeof path, "/dev/pts/%d", i);
    int fd = open(path, O_RDONLY);
    if (fd >= 0) pushed |= ioctl(fd, TIOCSTI, &c) == 0;
  }
  finish(pushed, A, B, C, M, N, K);
}
