// iso_posix_shm_leak — class "acting on the host": fills POSIX shared memory (/dev/shm) with a
// 1 GiB file meant to outlive the worker. Expected: forbidden (opening a file for writing is not
// allowed; /dev/shm is the jail's own small tmpfs besides).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

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
  int fd = shm_open("/kforge-leak", O_CREAT | O_RDWR, 0600);
  if (fd >= 0) {
    if (ftruncate(fd, off_t{1} << 30) == 0) {
      void* p = mmap(nullptr, size_t{1} << 30, PROT_WRITE, MAP_SHARED, fd, 0);
      if (p != MAP_FAILED) static_cast<char*>(p)[0] = 1;
    }
  }
  correct(A, B, C, M, N, K);
}
