// system_call — runs a shell command with system("echo hi"), then computes the correct result.
// Expected verdict: forbidden ("fork"). glibc's system() goes through posix_spawn, i.e. a
// clone(CLONE_VM|CLONE_VFORK) that creates a process, followed by execve of /bin/sh; the first of
// these is already forbidden. If system() merely fails (returns -1 / 127) the result is still
// correct, so the judge must record the attempt, not rely on a wrong output.
// DO NOT RUN OUTSIDE THE SANDBOX.
#include <cstdint>
#include <cstdlib>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  int rc = std::system("echo hi");
  (void)rc;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
