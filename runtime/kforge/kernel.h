// kforge/kernel.h — the only kforge header a candidate or a reference may include.
//
// It is deliberately tiny (no standard headers beyond <cstdint> and <cstring>) so that including
// it costs nothing at compile time. It provides:
//   kf::bf16       bfloat16 storage type (round-to-nearest-even from float, exact to float)
//   kf::acc_t<T>   the arithmetic type for storage type T: float for bf16 and float, double for
//                  double. References use it so one template serves as the f64 oracle and as the
//                  speed baseline at the task's dtype:
//
//   template <typename T>
//   void rmsnorm(const T* x, const T* w, T* y, int64_t N, int64_t D, T eps) {
//     using A = kf::acc_t<T>;
//     ... A v = A(x[i]); ... y[i] = T(v * A(w[d]));
//   }
#pragma once

#include <cstdint>
#include <cstring>

namespace kf {

struct bf16 {
  uint16_t bits = 0;

  bf16() = default;
  explicit bf16(float f) { bits = from_float(f); }
  explicit bf16(double d) : bf16(static_cast<float>(d)) {}
  explicit operator float() const { return to_float(bits); }
  explicit operator double() const { return static_cast<double>(to_float(bits)); }

  static uint16_t from_float(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>(u >> 16);
  }
  static float to_float(uint16_t b) {
    uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
  }
};

template <typename T>
struct acc_type {
  using type = T;
};
template <>
struct acc_type<bf16> {
  using type = float;
};
template <typename T>
using acc_t = typename acc_type<T>::type;

}  // namespace kf
