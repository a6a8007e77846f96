#include <kforge/kernel.h>

#include <vector>

// Scatter form: input position i with tap r lands at output o = 3 * i - 4 + r.
template <typename T>
void convt1d_s3(const T* x, const T* w, T* y, int64_t N, int64_t C, int64_t K, int64_t L,
                int64_t R) {
  using A = kf::acc_t<T>;
  const int64_t O = 3 * L;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k) {
      std::vector<A> acc(static_cast<size_t>(O), A(0));
      for (int64_t c = 0; c < C; ++c)
        for (int64_t i = 0; i < L; ++i)
          for (int64_t r = 0; r < R; ++r) {
            const int64_t o = 3 * i - 4 + r;
            if (o >= 0 && o < O) acc[static_cast<size_t>(o)] += A(x[(n * C + c) * L + i]) * A(w[(c * K + k) * R + r]);
          }
      for (int64_t o = 0; o < O; ++o) y[(n * K + k) * O + o] = T(acc[static_cast<size_t>(o)]);
    }
}
