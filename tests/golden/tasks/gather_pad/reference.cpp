#include <kforge/kernel.h>

template <typename T>
void gather_pad(const T* E, const int32_t* ids, const int64_t* lens, const T* w, T* y, int64_t Tn,
                int64_t V, int64_t D, int64_t R) {
  using A = kf::acc_t<T>;
  (void)V;
  for (int64_t t = 0; t < Tn; ++t)
    for (int64_t d = 0; d < D; ++d) {
      A s = 0;
      for (int64_t r = 0; r < R; ++r) {
        const int64_t c = d + r - 1;
        A g = 0;
        if (c >= 0 && c < D && c < lens[t]) g = A(E[ids[t] * D + c]);
        s += g * A(w[r]);
      }
      y[t * D + d] = T(s);
    }
}
