// Reference for 11_megablox_gmm: grouped matrix multiply over ragged groups of rows.
// Rows of lhs [M, K] are split into G consecutive groups of group_sizes[g] rows (sum = M, a group
// may be empty); group g's rows are multiplied by rhs[g] [K, N]:
//   out[m, :] = lhs[m, :] @ rhs[g(m)],   g(m) = the group whose row range holds m
// i-k-j loops with a row accumulator: each out[m, n] is summed over k in ascending order.
#include <kforge/kernel.h>

#include <vector>

template <typename T>
void megablox_gmm(const T* lhs, const T* rhs, const int32_t* group_sizes, T* out, int64_t M,
                  int64_t K, int64_t N, int64_t G) {
  using Acc = kf::acc_t<T>;
  std::vector<Acc> row(static_cast<size_t>(N));
  int64_t start = 0;
  for (int64_t g = 0; g < G; ++g) {
    const T* W = rhs + g * K * N;
    for (int64_t m = start; m < start + group_sizes[g] && m < M; ++m) {
      for (int64_t n = 0; n < N; ++n) row[n] = 0;
      for (int64_t k = 0; k < K; ++k) {
        const Acc a = Acc(lhs[m * K + k]);
        for (int64_t n = 0; n < N; ++n) row[n] += a * Acc(W[k * N + n]);
      }
      for (int64_t n = 0; n < N; ++n) out[m * N + n] = T(row[n]);
    }
    start += group_sizes[g];
  }
}
