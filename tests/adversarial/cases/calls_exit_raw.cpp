// calls_exit_raw — calls _exit(0) from inside the kernel (after computing a correct C): no atexit
// handlers, no stdio flush, status 0.
// Expected verdict: crash ("exit"). Same as calls_exit: a worker that exits, with any status,
// while a run is in progress has crashed. (exit_group cannot be forbidden: the worker needs it.)
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  _exit(0);
}
