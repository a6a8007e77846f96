#include <kforge/kernel.h>

template <typename T>
void dot(const T* x, const T* y, T* s, int64_t B, int64_t N) {
  using A = kf::acc_t<T>;
  for (int64_t b = 0; b < B; ++b) {
    A acc = 0;
    for (int64_t i = 0; i < N; ++i) acc += A(x[b * N + i]) * A(y[b * N + i]);
    s[b] = T(acc);
  }
}
