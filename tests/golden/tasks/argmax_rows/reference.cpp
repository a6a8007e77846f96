#include <kforge/kernel.h>

template <typename T>
void argmax_rows(const T* x, int32_t* idx, T* mx, int64_t N, int64_t D) {
  for (int64_t n = 0; n < N; ++n) {
    int64_t best = -1;
    T v = T(0);
    for (int64_t d = 0; d < D; ++d)
      if (best < 0 || x[n * D + d] > v) {
        v = x[n * D + d];
        best = d;
      }
    idx[n] = static_cast<int32_t>(best);
    mx[n] = v;
  }
}
