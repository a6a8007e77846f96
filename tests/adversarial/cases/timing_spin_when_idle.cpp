// timing_spin_when_idle — an honest GEMM that, from its first call on, keeps a thread on every CPU
// spinning whenever the kernel is NOT running (and asleep while it runs), so that it never shows
// as a second thread of the kernel but slows whatever the judge times between its calls: the
// reference, the baseline, a rival.
// Expected verdict: ok, and no gain. A solution's worker is stopped whenever it is not being
// timed, so the spinner never runs during another solution's batch; during the candidate's own
// batches it sleeps. (tests/unit/harness_side_by_side_test.cpp checks that the reference's time
// next to this candidate matches its time next to an honest one.)
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

namespace {

std::atomic<bool> g_in_kernel{false};
std::atomic<bool> g_started{false};

void spin_when_idle() {
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < 64; ++c) CPU_SET(c, &all);
  pthread_setaffinity_np(pthread_self(), sizeof all, &all);
  volatile uint64_t n = 0;
  for (;;) {
    while (g_in_kernel.load(std::memory_order_relaxed))
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    n = n + 1;
  }
}

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  g_in_kernel = true;
  if (!g_started.exchange(true)) std::thread(spin_when_idle).detach();
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
  g_in_kernel = false;
}
