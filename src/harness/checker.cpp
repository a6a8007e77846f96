#include "harness/checker.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace kf {

std::string element_name(const std::string& name, size_t i, const std::vector<int64_t>& extents) {
  std::vector<size_t> idx(extents.size());
  for (size_t d = extents.size(); d-- > 0;) {
    auto e = static_cast<size_t>(std::max<int64_t>(extents[d], 1));
    idx[d] = i % e;
    i /= e;
  }
  std::string s = name + "[";
  for (size_t d = 0; d < idx.size(); ++d) s += fmt::format("{}{}", d ? ", " : "", idx[d]);
  return s + "]";
}

namespace {

// Fills `elements` values of `bytes` each with the bit pattern `bits` (little-endian).
template <typename T>
void fill_bits(void* data, size_t elements, T bits) {
  std::fill_n(static_cast<T*>(data), elements, bits);
}

// Whether one element `y` passes against the oracle's `w` (a non-finite oracle value is left to
// the full check, which requires the same class of value).
bool element_ok(double y, double w, DType dtype, const Tolerance& tol) {
  if (!std::isfinite(w)) return true;
  if (!std::isfinite(y)) return false;
  return std::abs(y - w) <= (is_floating(dtype) ? tol.atol + tol.rtol * std::abs(w) : 0);
}

uint64_t xorshift(uint64_t& x) {
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  return x * 0x2545f4914f6cdd1dull;
}

}  // namespace

void poison(void* data, DType dtype, size_t elements) {
  // A bit pattern per dtype, written as plain integers: this runs before every timed batch on
  // every output, so it must cost no more than a memset.
  switch (dtype) {
    case DType::f32:
      return fill_bits<uint32_t>(data, elements, 0x7fc00000u);
    case DType::f64:
      return fill_bits<uint64_t>(data, elements, 0x7ff8000000000000ull);
    case DType::bf16:
      return fill_bits<uint16_t>(data, elements, uint16_t{0x7fc0});
    case DType::i32:
      return fill_bits<int32_t>(data, elements, std::numeric_limits<int32_t>::min());
    case DType::i64:
      return fill_bits<int64_t>(data, elements, std::numeric_limits<int64_t>::min());
  }
}

std::vector<size_t> sample_indices(size_t elements, size_t count, uint64_t seed) {
  std::vector<size_t> out;
  if (elements <= count) {
    out.resize(elements);
    for (size_t i = 0; i < elements; ++i) out[i] = i;
    return out;
  }
  uint64_t x = seed | 1;
  out.reserve(count);
  for (size_t k = 0; k < count; ++k) out.push_back(static_cast<size_t>(xorshift(x) % elements));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

OracleSample take_sample(const double* want, std::vector<size_t> index) {
  OracleSample s;
  s.value.reserve(index.size());
  for (size_t i : index) s.value.push_back(want[i]);
  s.index = std::move(index);
  return s;
}

std::string check_sample(const std::string& name, const void* got, DType dtype,
                         const OracleSample& want, const std::vector<int64_t>& extents,
                         const Tolerance& tol, uint64_t seed, size_t count) {
  const size_t n = want.index.size();
  const bool all = n <= count;
  uint64_t x = seed | 1;
  for (size_t k = 0; k < (all ? n : count); ++k) {
    const size_t j = all ? k : static_cast<size_t>(xorshift(x) % n);
    const size_t i = want.index[j];
    const double y = load_as_double(got, dtype, i), w = want.value[j];
    if (!element_ok(y, w, dtype, tol))
      return fmt::format("{}: got {}, expected {}", element_name(name, i, extents), y, w);
  }
  return "";
}

CompareResult compare_output(const std::string& name, const void* got, DType dtype,
                             const double* want, const std::vector<int64_t>& extents,
                             const Tolerance& tol) {
  CompareResult r;
  size_t n = 1;
  for (auto e : extents) n *= static_cast<size_t>(e);
  const bool exact = !is_floating(dtype);
  double err2 = 0, ref2 = 0, worst_ratio = -1;
  size_t worst_i = 0;
  auto fail_at = [&](size_t i, double y, double w, const char* why) {
    if (r.bad_count++ == 0)
      r.detail =
          fmt::format("{}: got {}, expected {}{}", element_name(name, i, extents), y, w, why);
    r.passed = false;
  };
  for (size_t i = 0; i < n; ++i) {
    const double y = load_as_double(got, dtype, i), w = want[i];
    if (!std::isfinite(w)) {
      // The oracle itself is NaN/Inf here: require the same class of value.
      bool same = (std::isnan(w) && std::isnan(y)) || (std::isinf(w) && y == w);
      if (!same) fail_at(i, y, w, "");
      continue;
    }
    if (!std::isfinite(y)) {
      fail_at(i, y, w, std::isnan(y) ? " (NaN: unwritten or invalid)" : " (Inf)");
      continue;
    }
    const double d = std::abs(y - w);
    err2 += d * d;
    ref2 += w * w;
    r.max_abs_err = std::max(r.max_abs_err, d);
    const double bound = exact ? 0.0 : tol.atol + tol.rtol * std::abs(w);
    const double ratio = bound > 0 ? d / bound : (d > 0 ? INFINITY : 0);
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst_i = i;
    }
    if (d > bound)
      fail_at(i, y, w, fmt::format(" (|error| {:.3g} > bound {:.3g})", d, bound).c_str());
  }
  r.rel_l2 = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  r.worst_ratio = std::max(worst_ratio, 0.0);
  if (n > 0 && worst_ratio >= 0)
    r.worst = fmt::format("{}: got {}, expected {}", element_name(name, worst_i, extents),
                          load_as_double(got, dtype, worst_i), want[worst_i]);
  if (!exact && r.rel_l2 > tol.rel_l2) {
    r.passed = false;
    std::string msg =
        fmt::format("{}: relative L2 error {:.3g} exceeds {:.3g}", name, r.rel_l2, tol.rel_l2);
    r.detail = r.detail.empty() ? msg : msg + "; first bad element " + r.detail;
  } else if (r.bad_count > 0) {
    r.detail = fmt::format("{} of {} elements of {} out of tolerance; first: {}", r.bad_count, n,
                           name, r.detail);
  }
  return r;
}

std::string spot_check(const std::string& name, const void* got, DType dtype, const double* want,
                       const std::vector<int64_t>& extents, const Tolerance& tol, uint64_t seed,
                       size_t count) {
  size_t n = 1;
  for (auto e : extents) n *= static_cast<size_t>(e);
  const bool all = n <= count;
  uint64_t x = seed | 1;
  for (size_t k = 0; k < (all ? n : count); ++k) {
    size_t i = k;
    if (!all) i = static_cast<size_t>(xorshift(x) % n);
    const double y = load_as_double(got, dtype, i), w = want ? want[i] : 0;
    const bool finite_ok = std::isfinite(y) || (want && !std::isfinite(w));
    const bool value_ok =
        !want || !std::isfinite(w) ||
        std::abs(y - w) <= (is_floating(dtype) ? tol.atol + tol.rtol * std::abs(w) : 0);
    if (!finite_ok || !value_ok)
      return fmt::format("{}: got {}{}", element_name(name, i, extents), y,
                         want ? fmt::format(", expected {}", w) : std::string(" (unwritten)"));
  }
  return "";
}

}  // namespace kf
