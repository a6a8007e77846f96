// The checker: compares a solution's outputs with the float64 oracle's. The parent runs it on
// buffers it owns; the oracle's values never enter the candidate's process.
//
// An output passes when (1) every element is finite wherever the oracle is finite, (2) the
// relative L2 error ‖y − y*‖ / ‖y*‖ is within rel_l2, and (3) every element satisfies
// |y − y*| ≤ atol + rtol·|y*|. Integer outputs must match exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "task/task.h"

namespace kf {

struct CompareResult {
  bool passed = true;
  double rel_l2 = 0;
  double max_abs_err = 0;
  std::string worst;       // element with the largest error relative to its bound
  double worst_ratio = 0;  // that element's |y - y*| / bound (1 = at the bound; integers: 0 or inf)
  std::string detail;      // first failure, e.g. "C[3, 7]: got nan, expected 1.25"
  size_t bad_count = 0;
};

// `got` holds `dtype` elements, `want` holds doubles, both with `extents`.
CompareResult compare_output(const std::string& name, const void* got, DType dtype,
                             const double* want, const std::vector<int64_t>& extents,
                             const Tolerance& tol);

// Elementwise check of `count` pseudo-randomly chosen elements (all of them when the tensor is
// smaller): cheap enough to run after every timed batch. Returns "" or the first failure.
std::string spot_check(const std::string& name, const void* got, DType dtype, const double* want,
                       const std::vector<int64_t>& extents, const Tolerance& tol, uint64_t seed,
                       size_t count);

// The oracle's answer for one output at a fixed set of elements: what the judge keeps for input
// contents whose full answer it cannot afford to store (the bench shape's rotated inputs).
struct OracleSample {
  std::vector<size_t> index;  // ascending element indices
  std::vector<double> value;  // the oracle's value at each
};

// `count` distinct element indices of a tensor of `elements`, drawn from `seed` (all of them
// when the tensor is no larger), ascending.
std::vector<size_t> sample_indices(size_t elements, size_t count, uint64_t seed);

// The oracle's values at `index` of its full output `want`.
OracleSample take_sample(const double* want, std::vector<size_t> index);

// Elementwise check of `got` at up to `count` of the sample's elements (chosen from `seed`; all
// of them when the sample is no larger), as spot_check does. Returns "" or the first failure.
std::string check_sample(const std::string& name, const void* got, DType dtype,
                         const OracleSample& want, const std::vector<int64_t>& extents,
                         const Tolerance& tol, uint64_t seed, size_t count);

// "C[3, 7]" for flat index i in a row-major tensor.
std::string element_name(const std::string& name, size_t i, const std::vector<int64_t>& extents);

// Fills a buffer with values no correct kernel leaves behind: quiet NaN for floating types, the
// minimum value for integers.
void poison(void* data, DType dtype, size_t elements);

}  // namespace kf
