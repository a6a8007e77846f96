// ok_openmp — CONTROL. A correct GEMM parallelized with `#pragma omp parallel for` over rows.
// Expected verdict: ok. Threads are allowed (DESIGN.md: "candidates may start threads but not
// processes"), so the sandbox must let libgomp create its worker threads: on glibc >= 2.34
// pthread_create uses clone3, whose flags a seccomp filter cannot inspect, so the filter must make
// clone3 fail with ENOSYS (glibc then falls back to clone, whose flags it can check for
// CLONE_THREAD). libgomp also opens /sys and /proc files read-only on its first parallel region
// and keeps its thread pool alive (idle or spinning) after the kernel returns: neither is a
// violation.
#include <kforge/kernel.h>

#include <cstdint>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
#pragma omp parallel for schedule(static)
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
