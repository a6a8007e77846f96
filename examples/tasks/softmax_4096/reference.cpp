#include <kforge/kernel.h>

#include <cmath>

// Three passes per row: max, sum of exponentials, normalized exponentials.
template <typename T>
void softmax(const T* x, T* y, int64_t N, int64_t D) {
  for (int64_t n = 0; n < N; ++n) {
    T m = -INFINITY;
    for (int64_t d = 0; d < D; ++d) m = std::max(m, x[n * D + d]);
    T s = 0;
    for (int64_t d = 0; d < D; ++d) s += std::exp(x[n * D + d] - m);
    for (int64_t d = 0; d < D; ++d) y[n * D + d] = std::exp(x[n * D + d] - m) / s;
  }
}
