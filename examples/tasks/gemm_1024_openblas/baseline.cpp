// Library baseline for gemm_1024_openblas: OpenBLAS's f32 GEMM (cblas_sgemm, row-major), on as
// many threads as the kernel is given (OMP_NUM_THREADS; OpenBLAS would otherwise use every core).
#include <cblas.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  static const bool threads_set = [] {
    const char* n = std::getenv("OMP_NUM_THREADS");
    openblas_set_num_threads(n ? std::atoi(n) : 1);
    return true;
  }();
  (void)threads_set;
  if (M == 0 || N == 0) return;
  if (K == 0) {
    std::memset(C, 0, sizeof(float) * M * N);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(M), static_cast<int>(N),
              static_cast<int>(K), 1.0f, A, static_cast<int>(K), B, static_cast<int>(N), 0.0f, C,
              static_cast<int>(N));
}
