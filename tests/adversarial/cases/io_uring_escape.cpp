// io_uring_escape — sets up an io_uring instance (io_uring_setup). Operations submitted through an
// io_uring (openat, connect, read, write, ...) are executed by the kernel without passing through
// the seccomp filter, so a filter that denies open/socket but allows io_uring_setup can be
// bypassed completely. This case only creates the ring (and closes it), then computes the correct
// result.
// Expected verdict: forbidden ("io_uring"). io_uring_setup, io_uring_enter and io_uring_register
// must be denied and the attempt recorded. DO NOT RUN OUTSIDE THE SANDBOX.
#include <linux/io_uring.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  io_uring_params params;
  std::memset(&params, 0, sizeof params);
  long fd = syscall(SYS_io_uring_setup, 8, &params);
  if (fd >= 0) close(static_cast<int>(fd));
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
