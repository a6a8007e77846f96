// kills_parent — sends SIGKILL to its parent process (kill(getppid(), SIGKILL)): the judge, or
// whatever the worker hangs off. Then computes the correct result, in case the kill failed.
// Expected verdict: forbidden ("kill"). Signals to any process other than the worker itself must
// be denied (kill/tkill/tgkill/rt_sigqueueinfo/pidfd_send_signal with a pid that is not the
// worker's own; raise() and abort() signal the worker itself and stay allowed), and the attempt
// recorded. Defence in depth: a PID namespace, or a judge that is not the worker's direct parent.
// If the judge gets this wrong, the test runner itself dies. DO NOT RUN OUTSIDE THE SANDBOX.
#include <signal.h>
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  kill(getppid(), SIGKILL);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
