// sigsys_swallow — installs its own SIGSYS handler (which just returns) and unblocks SIGSYS, then
// calls fork(); when fork "fails" it computes the correct result. If the judge's seccomp filter
// uses SECCOMP_RET_TRAP and relies on the worker's own SIGSYS handler to report the violation,
// the candidate's handler replaces the judge's and the violation vanishes; the kernel then reports
// a correct C.
// Expected verdict: forbidden ("fork"). The judge must not depend on anything in the worker's
// address space or signal table to learn about violations: use SECCOMP_RET_KILL_PROCESS (the
// parent sees death by SIGSYS; /proc or the audit log, or RET_TRAP only as a best-effort
// annotation, can name the syscall), or SECCOMP_RET_USER_NOTIF handled by the parent, or deny
// rt_sigaction for SIGSYS. DO NOT RUN OUTSIDE THE SANDBOX.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

namespace {
void swallow(int, siginfo_t*, void*) {}
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  struct sigaction sa = {};
  sa.sa_sigaction = swallow;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSYS, &sa, nullptr);
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGSYS);
  sigprocmask(SIG_UNBLOCK, &s, nullptr);
  pid_t p = fork();
  if (p == 0) _exit(0);
  if (p > 0) waitpid(p, nullptr, 0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) acc += A[i * K + k] * B[k * N + j];
      C[i * N + j] = acc;
    }
}
