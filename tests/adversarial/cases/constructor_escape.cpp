// constructor_escape — the forbidden work happens in a global object's constructor, which runs
// when the shared object is loaded (dlopen), before gemm is ever called: it fork()s (the child
// exits at once) and opens a socket. gemm itself is a correct, innocent kernel.
// Expected verdict: forbidden ("fork"). The sandbox (seccomp filter, limits, namespaces) must be in
// force BEFORE the worker dlopen()s the candidate, and a violation during loading must be reported
// as forbidden like one during a run. The parent must never dlopen a candidate itself (e.g. to
// inspect its symbols — use the ELF symbol table instead). __attribute__((constructor)) functions
// and .init_array entries behave the same way. DO NOT RUN OUTSIDE THE SANDBOX.
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

namespace {
struct Escape {
  Escape() {
    pid_t p = fork();
    if (p == 0) _exit(0);  // the child does nothing; creating it is the violation
    if (p > 0) waitpid(p, nullptr, 0);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd >= 0) close(fd);
  }
};
Escape g_escape;
}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      float s = 0.0f;
      for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * N + j];
      C[i * N + j] = s;
    }
}
