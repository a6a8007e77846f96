// timing_threads_confined — CONTROL for the thread cases: under a grant of one thread it asks
// OpenMP for two threads (num_threads(2)) but leaves their placement alone.
// Expected verdict: ok, and no gain: the judge starts every timed worker on the granted CPUs
// only and OpenMP binds its threads inside that mask, so the extra thread shares the one CPU.
// Forbidding the request itself would be wrong: a kernel cannot know the grant at compile time.
#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
#pragma omp parallel for num_threads(2) schedule(static)
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
