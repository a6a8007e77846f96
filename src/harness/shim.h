// The entry shim: the few lines the harness appends to a solution so the worker can call the
// task's typed function through one fixed C entry point:
//
//   extern "C" void kf_entry(void* const* buf, const int64_t* dims, const double* scalars);
//
// For the task `gemm(A, B, C, M, N, K)` the candidate shim reads
//   gemm(static_cast<const float*>(buf[0]), static_cast<const float*>(buf[1]),
//        static_cast<float*>(buf[2]), dims[0], dims[1], dims[2]);
#pragma once

#include <string>

#include "task/task.h"

namespace kf {

enum class ShimKind {
  candidate,  // the task's dtype; the function may be a plain function or a template
  oracle,     // reference<double>: every floating tensor and scalar is f64
  reference,  // reference<dtype>: the speed baseline
};

std::string entry_shim(const Task& task, ShimKind kind);

// The declaration a candidate must define, e.g.
// "void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K)".
std::string candidate_signature(const Task& task);

// The dtype a buffer holds for this kind of solution (oracle widens floating tensors to f64).
DType buffer_dtype(const Task& task, size_t tensor, ShimKind kind);

}  // namespace kf
