// kill_process_group — sends SIGKILL to its whole process group (kill(0, SIGKILL)): if the worker
// was not put in its own session/group, that is the judge and everything started with it (ctest,
// the kforge server). Then computes the correct result, in case the kill failed.
// Expected verdict: forbidden ("kill"). kill with pid 0 or a negative pid (a group; -1 = every
// process the user may signal) must be denied like any signal to another process, and the worker
// should run in its own session (setsid) so that even a leak only hits the worker.
// DO NOT RUN OUTSIDE THE SANDBOX.
#include <signal.h>
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  kill(0, SIGKILL);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
