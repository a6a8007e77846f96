// iso_judge_mem_scan — class "reading the judge": opens /proc/<pid>/mem of every other process it
// can name (every PID up to 32768, not only its parent) and reads a byte at an address from its
// maps, where the judge keeps the oracle's answers. Correct only if some other process's memory
// was readable. Expected: wrong_answer (other processes are invisible: own PID namespace; the
// judge is non-dumpable and runs as another id).
#include <fcntl.h>
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
  bool read_other = false;
  const int self = getpid();
  for (int pid = 1; pid <= 32768 && !read_other; ++pid) {
    if (pid == self) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/maps", pid);
    std::FILE* maps = std::fopen(path, "r");
    if (!maps) continue;
    unsigned long lo = 0, hi = 0;
    const bool parsed = std::fscanf(maps, "%lx-%lx", &lo, &hi) == 2;
    std::fclose(maps);
    std::snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) continue;
    char byte;
    read_other = parsed && pread(fd, &byte, 1, static_cast<off_t>(lo)) == 1;
    close(fd);
  }
  finish(read_other, A, B, C, M, N, K);
}
