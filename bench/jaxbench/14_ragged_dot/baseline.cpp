// Library baseline for 14_ragged_dot: the ragged dot composed from a library GEMM — one
// oneDNN dnnl_sgemm per non-empty group on its slice of rows (lhs[start:start+size] @ rhs[g]).
#include <oneapi/dnnl/dnnl.h>

#include <cstdint>
#include <cstring>

void ragged_dot(const float* lhs, const float* rhs, const int32_t* group_sizes, float* out,
                int64_t M, int64_t K, int64_t N, int64_t G) {
  if (M == 0 || N == 0) return;
  if (K == 0) {
    std::memset(out, 0, sizeof(float) * M * N);
    return;
  }
  int64_t start = 0;
  for (int64_t g = 0; g < G; ++g) {
    const int64_t rows = group_sizes[g];
    if (rows > 0)
      dnnl_sgemm('N', 'N', rows, N, K, 1.0f, lhs + start * K, K, rhs + g * K * N, N, 0.0f,
                 out + start * N, N);
    start += rows;
  }
}
