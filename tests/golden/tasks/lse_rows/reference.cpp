#include <kforge/kernel.h>

#include <cmath>
#include <limits>

// Two passes per row in double: the maximum, then the sum of exp(value - maximum).
template <typename T>
void lse_rows(const T* x, T* y, T* z, int64_t N, int64_t D) {
  const double ninf = -std::numeric_limits<double>::infinity();
  auto lse = [&](auto value, int64_t n) {
    double m = ninf;
    for (int64_t d = 0; d < n; ++d) m = std::max(m, value(d));
    if (m == ninf) return ninf;
    double s = 0;
    for (int64_t d = 0; d < n; ++d) s += std::exp(value(d) - m);
    return m + std::log(s);
  };
  for (int64_t r = 0; r < N; ++r) {
    const T* row = x + r * D;
    y[r] = static_cast<T>(lse([&](int64_t d) { return d % 7 == 3 ? ninf : 8.0 * row[d]; }, D));
    z[r] = static_cast<T>(lse([&](int64_t d) { return static_cast<double>(row[d]); }, r % (D + 1)));
  }
}
