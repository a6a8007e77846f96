#include <kforge/kernel.h>

template <typename T>
void scan(const T* x, T* y, int64_t B, int64_t L) {
  using A = kf::acc_t<T>;
  for (int64_t b = 0; b < B; ++b) {
    A c = 0;
    for (int64_t l = 0; l < L; ++l) {
      c += A(x[b * L + l]);
      y[b * L + l] = T(2 * c - A(x[b * L + l]));
    }
  }
}
