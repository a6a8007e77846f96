// A hand-written candidate for bench/jaxbench/08_gemm: C = A @ B (row-major, f32).
//
// Register-blocked: a 6x32 tile of C lives in 12 vector registers (GCC vector extensions,
// 16 floats each) while k runs over a 256-deep slice; B's 256x32 panel stays in L1 and is
// reused by every 6-row strip of A. Panels of 32 columns are split across threads. Edges that
// do not fill a tile fall back to plain loops, so every shape is correct.
#include <omp.h>

#include <cstdint>
#include <cstring>

namespace {

typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4)));  // unaligned access

constexpr int64_t kMR = 6, kNR = 32, kKC = 256;

inline v16 load(const float* p) { return *reinterpret_cast<const v16u*>(p); }
inline void store(float* p, v16 v) { *reinterpret_cast<v16u*>(p) = v; }

// C[0:6, 0:32] += A[0:6, 0:kc] @ B[0:kc, 0:32]
void micro_tile(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t kc) {
  v16 c[kMR][2];
  for (int r = 0; r < kMR; ++r) {
    c[r][0] = load(C + r * N);
    c[r][1] = load(C + r * N + 16);
  }
  for (int64_t k = 0; k < kc; ++k) {
    const v16 b0 = load(B + k * N), b1 = load(B + k * N + 16);
    for (int r = 0; r < kMR; ++r) {
      const float a = A[r * K + k];
      c[r][0] += a * b0;
      c[r][1] += a * b1;
    }
  }
  for (int r = 0; r < kMR; ++r) {
    store(C + r * N, c[r][0]);
    store(C + r * N + 16, c[r][1]);
  }
}

// The same product for a tile that does not fill 6x32.
void edge_tile(const float* A, const float* B, float* C, int64_t N, int64_t K, int64_t kc,
               int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < kc; ++k) {
      const float a = A[r * K + k];
      for (int64_t j = 0; j < cols; ++j) C[r * N + j] += a * B[k * N + j];
    }
}

}  // namespace

void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K) {
  for (int64_t i = 0; i < M; ++i) std::memset(C + i * N, 0, sizeof(float) * N);
  const int64_t panels = (N + kNR - 1) / kNR;
  for (int64_t k0 = 0; k0 < K; k0 += kKC) {
    const int64_t kc = K - k0 < kKC ? K - k0 : kKC;
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t j0 = p * kNR, cols = N - j0 < kNR ? N - j0 : kNR;
      for (int64_t i0 = 0; i0 < M; i0 += kMR) {
        const int64_t rows = M - i0 < kMR ? M - i0 : kMR;
        const float* a = A + i0 * K + k0;
        const float* b = B + k0 * N + j0;
        float* c = C + i0 * N + j0;
        if (rows == kMR && cols == kNR) {
          micro_tile(a, b, c, N, K, kc);
        } else {
          edge_tile(a, b, c, N, K, kc, rows, cols);
        }
      }
    }
  }
}
