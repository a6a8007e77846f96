// fork_bomb — calls fork() in an unbounded loop (every child keeps forking too), then, once fork
// fails, computes the correct result in every surviving process (children included: they return
// into the worker's code and would answer the judge's protocol a second time and write into the
// shared C buffer).
// Expected verdict: forbidden ("fork"). Processes are not allowed (threads are). The judge must
// detect the *attempt*: the kernel computes a correct C if fork merely fails, so a sandbox that
// only makes fork return an error (seccomp RET_ERRNO, RLIMIT_NPROC) without recording the
// violation would wrongly report ok. glibc's fork() is the clone syscall without CLONE_THREAD;
// diagnostics for any process creation (fork, vfork, clone without CLONE_THREAD, clone3) should
// say "fork". DO NOT RUN OUTSIDE THE SANDBOX.
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (;;) {
    pid_t p = fork();
    if (p < 0) break;  // stop only when the system refuses
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
