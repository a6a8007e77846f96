// Loops of a candidate's source, found by a small scanner: where each `for`, `while` and `do`
// loop starts and ends, so the profiler can map a compiler message ("candidate.cpp:16:53: ...")
// to the loop it is about, tell innermost loops from outer ones, and quote the loop's header.
// Not a C++ parser: comments and literals are blanked, then parentheses and braces are matched.
// Good enough for kernels; a macro that hides a loop is not seen.
//
//   std::vector<SourceLoop> loops = find_loops(source);
//   int i = innermost_loop_at(loops, 16, 53);     // -1 when (16, 53) is in no loop
//   if (i >= 0) show(loops[i].line, loops[i].header);  // 16, "for (int64_t j = 0; j < N; ++j)"
//   std::set<std::string> v = vector_type_names(source);  // {"f32x16", "v16"} from typedefs
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace kf::agents {

struct SourceLoop {
  int line = 0, column = 0;   // of the keyword; 1-based, columns in bytes
  int end_line = 0;           // line of the body's last character
  size_t begin = 0, end = 0;  // byte offsets: [keyword, one past the body's last character)
  std::string header;         // the header, whitespace collapsed: "for (int64_t k = 0; k < K; ++k)"
  std::string body;           // the body's text (with comments blanked), for keyword checks
};

// Every loop in `source`, in order of their keywords. Never fails: unbalanced text ends the
// affected loop at the end of the source.
std::vector<SourceLoop> find_loops(const std::string& source);

// Index of the innermost loop whose extent contains (line, column), or -1.
int innermost_loop_at(const std::vector<SourceLoop>& loops, int line, int column);

// Whether loop `outer` strictly contains loop `inner`.
bool loop_contains(const SourceLoop& outer, const SourceLoop& inner);

// Names declared as vector types: `typedef T NAME __attribute__((vector_size(N)))` and
// `using NAME = T __attribute__((vector_size(N)))`, plus the intrinsic types __m128.. __m512*
// when the source mentions them.
std::set<std::string> vector_type_names(const std::string& source);

// Whether `text` uses explicit SIMD: one of `names` (vector types) as a word or as a part of an
// identifier delimited by '_' (`kf_load_f32x16`), or an x86 intrinsic (`_mm512_fmadd_ps`).
bool uses_explicit_simd(const std::string& text, const std::set<std::string>& names);

// Line `line` (1-based) of `source`, trimmed; "" past the end.
std::string source_line(const std::string& source, int line);

}  // namespace kf::agents
