// A 3 x 3 weighted stencil over the valid region: x is (H + 2) x (W + 2), y is H x W.
#include <kforge/kernel.h>

template <typename T>
void blur3x3(const T* x, const T* w, T* y, int64_t H, int64_t W) {
  using Acc = kf::acc_t<T>;
  const int64_t XW = W + 2;
  for (int64_t i = 0; i < H; ++i)
    for (int64_t j = 0; j < W; ++j) {
      Acc s = 0;
      for (int64_t a = 0; a < 3; ++a)
        for (int64_t b = 0; b < 3; ++b) s += Acc(x[(i + a) * XW + j + b]) * Acc(w[a * 3 + b]);
      y[i * W + j] = T(s);
    }
}
