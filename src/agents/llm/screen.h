// Static screening of a model's candidate before anything is compiled: cheap checks that turn a
// reply the judge would only refuse later (or one that reaches for what it may not) into a clear
// recorded failure, and a normalized form so the same kernel written twice is judged once.
//
//   Status s = screen_candidate(source, task);      // ok, or why it was screened out
//   std::string n = normalized_source(source);      // comments and whitespace stripped
//
// The rules (a candidate must pass all):
//   - at most kMaxCandidateBytes, no NUL byte;
//   - includes only the allow-list: standard C and C++ headers a kernel uses, the x86
//     intrinsics headers, <omp.h>, and "kforge/kernel.h" (allowed_header);
//   - defines the task's function: its name, a parameter list with as many parameters as the
//     task's signature (harness/shim.h candidate_signature), then a body;
//   - names no BLAS or DNN library (cblas_, dnnl, mkl_, openblas, Eigen::) unless
//     `allow_libraries`, and not the judge's entry names (kf_entry, kforge_bind).
// The judge still decides everything these checks let through (the exact types are the link's).
#pragma once

#include <string>
#include <string_view>

#include "support/status.h"
#include "task/task.h"

namespace kf::agents::llm_brain {

inline constexpr size_t kMaxCandidateBytes = size_t{1} << 20;

struct ScreenOptions {
  bool allow_libraries = false;  // a task whose candidates may call a BLAS/DNN library
};

bool allowed_header(std::string_view name);

Status screen_candidate(std::string_view source, const Task& task, const ScreenOptions& o = {});

// The source without comments, string contents kept, runs of whitespace outside strings
// collapsed to one space (none next to punctuation): two sources that differ only there are one.
std::string normalized_source(std::string_view source);

}  // namespace kf::agents::llm_brain
