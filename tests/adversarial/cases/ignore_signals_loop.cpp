// ignore_signals_loop — ignores or blocks every catchable signal (SIGTERM, SIGINT, SIGHUP, SIGALRM,
// SIGXCPU, SIGVTALRM, SIGPROF, SIGUSR1/2, SIGPIPE, SIGCHLD, ...) in every thread it can reach, then
// spins forever.
// Expected verdict: timeout. A judge that ends an overrunning worker with SIGTERM, alarm()/SIGALRM
// or RLIMIT_CPU's soft-limit SIGXCPU never gets it to exit: the deadline must be enforced from the
// parent with SIGKILL (and the worker's whole process group / cgroup killed).
#include <csignal>
#include <cstdint>

void gemm(const float*, const float*, float*, int64_t, int64_t, int64_t) {
  for (int s = 1; s < NSIG; ++s) {
    if (s == SIGKILL || s == SIGSTOP) continue;
    signal(s, SIG_IGN);  // fails harmlessly for the few that cannot be ignored
  }
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);
  volatile uint64_t spin = 0;
  for (;;) spin = spin + 1;
}
