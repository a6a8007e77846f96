// The compiler's vectorization report for a candidate's loops, read from GCC's
// `-fopt-info-vec-optimized -fopt-info-vec-missed` output:
//
//   candidate.cpp:16:29: optimized: loop vectorized using 64 byte vectors
//   candidate.cpp:14:27: missed: couldn't vectorize loop
//   candidate.cpp:16:53: missed: not vectorized: complicated access pattern.
//
// Only messages about the candidate's own file count (not the entry shim, not headers). Each
// message is mapped to the innermost source loop around its location (profile_loops.h), so the
// several reports GCC makes for one loop (epilogues, versions, inlined copies) count once;
// a message in no source loop (GCC sometimes places a loop at a statement of a function
// inlined into it) is dropped. Hot loops are the innermost reported loops; an outer loop that
// GCC did not vectorize while an inner one was is expected and only counted in
// `outer_missed`. A loop GCC calls missed whose body already uses vector types or intrinsics,
// or whose reason names a vector type, counts as `explicit_simd`.
//
//   VectorizationReport r = parse_vectorization_report(gcc_stderr, source);
//   for (const MissedLoop& m : r.missed_loops) say(m.line, m.source, m.reason);
#pragma once

#include <string>
#include <vector>

namespace kf::agents {

struct MissedLoop {
  int line = 0;         // the loop's first line in the candidate's source
  std::string source;   // that line's text, trimmed: "for (int64_t k = 0; k < K; ++k) {"
  std::string reason;   // GCC's first reason: "not vectorized: complicated access pattern"
  int reason_line = 0;  // where GCC placed the reason (a statement inside the loop)
};

struct VectorizationReport {
  bool available = false;   // false: the report could not be made; see `unavailable`
  std::string unavailable;  // why, e.g. "the compiler failed: candidate.cpp:3:1: error: ..."
  int hot_loops = 0;        // innermost loops GCC reported on
  int vectorized = 0;       // hot loops GCC vectorized
  int explicit_simd = 0;    // hot loops already written with vector types or intrinsics
  int missed = 0;           // hot loops left scalar
  int outer_missed = 0;     // outer loops not vectorized (informational)
  int widest_bytes = 0;     // widest vectors GCC used in a vectorized loop (64 = AVX-512)
  std::vector<int> vectorized_lines;  // first lines of the vectorized hot loops
  // Vectorized hot loops whose widest vectors are 8 bytes or less (two floats): strided access
  // GCC could only pair up; about as slow as scalar code.
  std::vector<MissedLoop> narrow_loops;  // up to kMaxMissedLoops; reason "8-byte vectors"
  std::vector<MissedLoop> missed_loops;  // up to kMaxMissedLoops hot loops, by line

  static constexpr size_t kMaxMissedLoops = 8;
};

// Parses GCC's opt-info output. `file` is the name the candidate's lines carry (the profiler
// compiles with `#line 1 "candidate.cpp"`). Never fails; the result has available = true.
VectorizationReport parse_vectorization_report(const std::string& compiler_output,
                                               const std::string& source,
                                               const std::string& file = "candidate.cpp");

}  // namespace kf::agents
