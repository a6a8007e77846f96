// timing_threads_openmp4 — under a grant of one thread (OMP_NUM_THREADS=1), asks OpenMP for four
// threads with num_threads(4), and each of them moves itself onto every CPU before working (the
// judge's CPU mask and OpenMP's binding would otherwise keep them on the granted CPU).
// Expected verdict: forbidden ("with a grant of 1 thread").
#include <omp.h>
#include <sched.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
#pragma omp parallel num_threads(4)
  {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < 64; ++c) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
#pragma omp for schedule(static)
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
}
