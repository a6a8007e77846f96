// The reference.cpp that `kforge new` writes: a task's reference is a function template over the
// element type T, because the judge compiles it twice, FUNCTION<dtype> as the speed baseline and
// FUNCTION<double> as the oracle that judges every candidate (harness/shim.h). A user's kernel is
// usually a plain function over float; this file turns it into that template:
//
//   void scale_add(const float* x, float* y, int n, float a) {      template <typename T>
//     for (int i = 0; i < n; ++i)                              ->   void scale_add(const T* x, T*
//     y,
//       y[i] = a * x[i] + expf(0.5f);                                  int64_t n_arg, kf::acc_t<T>
//       a) {
//   }                                                                 int n(n_arg);
//                                                                     for (int i = 0; i < n; ++i)
//                                                                       y[i] = a * x[i] +
//                                                                       std::exp(T(0.5f));
//                                                                   }
//
// The rules, each chosen so that at T = float the code does what the original did:
//   - the element type (float; double in a double kernel; kf::bf16, with float -> kf::acc_t<T>,
//     in a bf16 kernel) becomes T in the signature and the body;
//   - f-suffixed literals become T(1.5f): the same float value at T = float, a double at T =
//   double;
//   - expf, sqrtf, fmaxf, ... become std::exp, std::sqrt, std::fmax, ... (the float overload at
//     T = float, the double one in the oracle; but given an integer argument, as in powf(x, 2),
//     std::pow computes in double at T = float too); FLT_MAX, FLT_MIN, FLT_EPSILON become
//     std::numeric_limits<T>;
//   - parameters go into the kernel ABI's order (inputs, outputs, dims, scalars); a size of
//     another type than int64_t (int, size_t) is received as int64_t and copied into a local of
//     its original type and name, so the body's arithmetic on it is unchanged; a scalar of another
//     floating type than the kernel's is copied the same way.
// What cannot be converted safely is left as written, with a `TODO(kforge):` line saying what to
// change (kforge check lists those lines): SIMD intrinsics, bit casts, unions, inline assembly in
// the body (the body is kept unconverted), and float used outside the kernel (helpers, constants:
// the oracle would call them in float). A template kernel in ABI order with the ABI's types is
// copied unchanged.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "task/dtype.h"
#include "task/signature_parse.h"

namespace kf {

// The marker of a line the user must act on, in reference.cpp (kforge check lists each).
inline constexpr std::string_view kReferenceTodo = "TODO(kforge)";

struct ReferenceDraft {
  std::string text;                  // reference.cpp
  std::vector<std::string> changes;  // what was rewritten, one line each ("float -> T: 4 places")
  std::vector<std::string> todos;    // what is left to the user (each is a TODO(kforge) line)
};

// reference.cpp from `source`, in which find_kernel found `site`; `dtype` is the task's dtype and
// `from` names the source in comments. `source` must be the text find_kernel read.
ReferenceDraft convert_reference(std::string_view source, const FunctionSite& site, DType dtype,
                                 std::string_view from);

// reference.cpp to write, from a signature alone: the template with the ABI's parameters and a
// body that is a TODO(kforge) line.
std::string reference_from_signature(const ParsedSignature& sig, std::string_view signature_text);

}  // namespace kf
