// The entry shim: how the worker calls a solution's typed function through one fixed C entry
// point,
//
//   extern "C" void kf_entry(void* const* buf, const int64_t* dims, const double* scalars);
//
// in two pieces, so that nothing in the solution's text can rewrite the judge's code:
//
//   entry  its own translation unit (kforge_entry.cpp), compiled apart from the solution. It
//          casts the judge's buffers and calls `kforge_bind` declared with the exact parameter
//          types, C++ linkage: the mangled name the linker must find encodes those types.
//   bind   a few lines appended to the solution's translation unit (kforge_bind.cpp) defining
//          kforge_bind with the same types. It takes the function's address as a pointer of the
//          exact type (no conversions: a wrong `int` dim, `double` tensor or missing `const` does
//          not match) and, for a function template, instantiates it at those types.
//
// A macro in the solution can rewrite the bind text, but only into a function that still has the
// exact typed signature (anything else leaves the entry's reference undefined, and the object is
// linked with -z defs), so the worst it can do is what the solution may do anyway: define a
// function with the task's signature. For the task `gemm(A, B, C, M, N, K)` the entry reads
//   kforge_bind(static_cast<const float*>(kf_buf[0]), static_cast<const float*>(kf_buf[1]),
//               static_cast<float*>(kf_buf[2]), kf_dims[0], kf_dims[1], kf_dims[2]);
#pragma once

#include <string>
#include <vector>

#include "task/task.h"

namespace kf {

enum class ShimKind {
  candidate,  // the task's dtype; the function may be a plain function or a template
  oracle,     // reference<double>: every floating tensor and scalar is f64
  reference,  // reference<dtype>: the speed baseline
};

struct EntryShim {
  std::string bind;       // appended to the solution's own translation unit
  std::string entry;      // a translation unit of its own; empty: the solution defines kf_entry
  std::string signature;  // what the solution must define, for messages
  std::string function;   // the task's function name
};

// The name of the bridge the entry calls and the bind text defines.
inline constexpr const char* kBindName = "kforge_bind";

EntryShim entry_shim(const Task& task, ShimKind kind);

// The declaration a candidate must define, e.g.
// "void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K)".
std::string candidate_signature(const Task& task);

// The C++ parameter types the shim passes for this kind of solution, in call order.
std::vector<std::string> shim_param_types(const Task& task, ShimKind kind);

// The dtype a buffer holds for this kind of solution (oracle widens floating tensors to f64).
DType buffer_dtype(const Task& task, size_t tensor, ShimKind kind);

}  // namespace kf
