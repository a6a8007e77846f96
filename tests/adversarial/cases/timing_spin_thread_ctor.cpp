// timing_spin_thread_ctor — a static constructor starts a thread that moves itself onto every CPU
// and spins forever, while the kernel itself is an honest single-threaded GEMM. Left running
// while the reference is timed it steals a core from it; while the kernel runs it is a second
// thread under a grant of one.
// Expected verdict: forbidden ("with a grant of 1 thread"). Every worker is stopped while another
// solution is timed, so the spinner can only run during the candidate's own batches, where the
// judge counts the CPU time of the whole worker: about two CPUs busy for a grant of one.
#include <pthread.h>
#include <sched.h>

#include <cstdint>
#include <thread>

namespace {

void on_every_cpu() {
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < 64; ++c) CPU_SET(c, &all);
  pthread_setaffinity_np(pthread_self(), sizeof all, &all);
}

struct Spinner {
  Spinner() {
    std::thread([] {
      on_every_cpu();
      volatile uint64_t n = 0;
      for (;;) n = n + 1;
    }).detach();
  }
} spinner;

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}
