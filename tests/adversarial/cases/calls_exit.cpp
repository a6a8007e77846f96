// calls_exit — calls exit(0) from inside the kernel (after computing a correct C).
// Expected verdict: crash ("exit"). The worker process ends with status 0 while a run is in
// progress — a clean-looking exit that must not be mistaken for success: the worker never sent its
// completion message. exit() also runs the worker's atexit handlers and static destructors, which
// must not send anything that looks like a reply (e.g. flushing a buffered "done").
#include <cstdint>
#include <cstdlib>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
  std::exit(0);
}
