// writes_file — computes the correct result, then writes files: fopen("out.txt", "w") in its
// working directory, open("/tmp/kforge_adversarial_x", O_CREAT|O_WRONLY), and (x86-64) the raw
// legacy open and creat syscalls, which a filter that only inspects openat would miss.
// Expected verdict: forbidden ("open"). Writing files is not allowed (read-only opens are: libgomp
// and the loader read /proc and /sys). A seccomp filter must check the flags of open and openat
// (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND), deny openat2 (its flags are behind a pointer) and
// creat, and record the attempt: C is correct, so failure to open is invisible in the output.
// DO NOT RUN OUTSIDE THE SANDBOX.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  if (std::FILE* f = std::fopen("out.txt", "w")) {
    std::fputs("verdict: ok\n", f);
    std::fclose(f);
  }
  int fd = open("/tmp/kforge_adversarial_x", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t w = write(fd, "x", 1);
    (void)w;
    close(fd);
  }
#if defined(__x86_64__)
  long r = syscall(SYS_open, "/tmp/kforge_adversarial_y", O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (r >= 0) close(static_cast<int>(r));
  r = syscall(SYS_creat, "/tmp/kforge_adversarial_z", 0644);
  if (r >= 0) close(static_cast<int>(r));
#endif
}
