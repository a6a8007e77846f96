// timing_threads_std — under a grant of one thread, splits the GEMM's rows over two std::threads,
// each of which first moves itself onto every CPU (the judge starts the worker on the granted
// CPUs only), for a near 2x "speedup" over solutions that kept to the grant.
// Expected verdict: forbidden ("with a grant of 1 thread"): the worker's CPU time during its timed
// calls is about twice their wall time.
#include <pthread.h>
#include <sched.h>

#include <cstdint>
#include <thread>

namespace {

void rows(const float* A, const float* B, float* C, int64_t lo, int64_t hi, int64_t N, int64_t K) {
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c = 0; c < 64; ++c) CPU_SET(c, &all);
  pthread_setaffinity_np(pthread_self(), sizeof all, &all);
  for (int64_t i = lo; i < hi; ++i) {
    float* c = C + i * N;
    for (int64_t j = 0; j < N; ++j) c[j] = 0.0f;
    for (int64_t k = 0; k < K; ++k) {
      const float a = A[i * K + k];
      const float* b = B + k * N;
      for (int64_t j = 0; j < N; ++j) c[j] += a * b[j];
    }
  }
}

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  std::thread t1(rows, A, B, C, 0, M / 2, N, K);
  std::thread t2(rows, A, B, C, M / 2, M, N, K);
  t1.join();
  t2.join();
}
