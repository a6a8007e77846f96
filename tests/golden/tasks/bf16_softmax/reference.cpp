#include <kforge/kernel.h>

#include <cmath>

template <typename T>
void bf16_softmax(const T* x, T* y, int64_t N, int64_t D) {
  using A = kf::acc_t<T>;
  for (int64_t n = 0; n < N; ++n) {
    A m = -INFINITY;
    for (int64_t d = 0; d < D; ++d) m = std::max(m, A(x[n * D + d]));
    A s = 0;
    for (int64_t d = 0; d < D; ++d) s += std::exp(A(x[n * D + d]) - m);
    for (int64_t d = 0; d < D; ++d) y[n * D + d] = T(std::exp(A(x[n * D + d]) - m) / s);
  }
}
