// ptrace_parent — tries to attach to its parent with ptrace(PTRACE_ATTACH, getppid()) (to read the
// oracle's outputs out of the judge, or rewrite its timings), then PTRACE_SEIZE.
// Then computes the correct result, in case all of it failed.
// Expected verdict: forbidden ("ptrace"). ptrace must be denied and the attempt recorded (the
// judge should additionally make itself non-dumpable, PR_SET_DUMPABLE 0, and rely on Yama). With
// a correct C, a mere EPERM from the kernel is invisible in the output.
// DO NOT RUN OUTSIDE THE SANDBOX.
#include <sys/ptrace.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  const pid_t parent = getppid();
  if (ptrace(PTRACE_ATTACH, parent, nullptr, nullptr) == 0)
    ptrace(PTRACE_DETACH, parent, nullptr, nullptr);
  if (ptrace(PTRACE_SEIZE, parent, nullptr, nullptr) == 0)
    ptrace(PTRACE_DETACH, parent, nullptr, nullptr);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
