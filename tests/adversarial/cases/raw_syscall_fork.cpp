// raw_syscall_fork — creates a process with an inline-assembly `syscall` instruction (x86-64
// fork, number 57; elsewhere the libc syscall() wrapper with clone(SIGCHLD)), bypassing every libc
// function: nothing named fork is imported, so LD_PRELOAD hooks, symbol-import checks (nm -u) and
// source greps for "fork(" all miss it. The child exits at once (raw exit_group); the parent
// computes the correct result.
// Expected verdict: forbidden ("fork"). Only a kernel-level filter (seccomp on fork, vfork, clone
// without CLONE_THREAD) sees it; note that the legacy fork and vfork syscalls exist on x86-64 and
// must be denied too, not just clone. DO NOT RUN OUTSIDE THE SANDBOX.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#if !defined(__x86_64__)
#include <sys/syscall.h>
#endif

namespace {
long raw_fork() {
#if defined(__x86_64__)
  long ret;
  asm volatile("syscall" : "=a"(ret) : "a"(57L) : "rcx", "r11", "memory");
  if (ret == 0) {
    asm volatile("syscall" : : "a"(231L), "D"(0L) : "rcx", "r11", "memory");  // exit_group(0)
    __builtin_unreachable();
  }
  return ret;
#else
  long ret = syscall(SYS_clone, static_cast<long>(SIGCHLD), 0L, 0L, 0L, 0L);
  if (ret == 0) _exit(0);
  return ret;
#endif
}
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  long child = raw_fork();
  if (child > 0) waitpid(static_cast<pid_t>(child), nullptr, 0);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
