// exec_shell — execve()s /bin/sh directly in the worker process (no fork first), so that a judge
// that only filters process creation misses it; falls back to computing the correct result if
// execve fails.
// Expected verdict: forbidden ("execve"). If execve were allowed, the worker image would be
// replaced by a shell: the judge would lose its worker (and the shell would run with the worker's
// descriptors, including the protocol pipe). execve and execveat must be denied after the worker
// has loaded the candidate. DO NOT RUN OUTSIDE THE SANDBOX.
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  char arg0[] = "/bin/sh";
  char arg1[] = "-c";
  char arg2[] = "echo verdict: ok";
  char* argv[] = {arg0, arg1, arg2, nullptr};
  char* envp[] = {nullptr};
  execve("/bin/sh", argv, envp);  // returns only on failure
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
