// Reading and wrapping a kernel's translation unit for `kforge export`: what the source needs
// from a build (OpenMP, threads, kforge/kernel.h), and the same text with the kernel's own
// definitions moved into a namespace of their own, so that an exported kernel's helpers
// (kf_scratch, kf_min_i64, vector typedefs, a written kernel's own functions) neither clash with
// nor leak into the project that links it.
//
//   SourceUse use = scan_source_use(best.source);          // use.openmp_pragmas, ...
//   std::string tu = wrap_source(best.source, {.open = "namespace impl {\nnamespace {\n",
//                                              .close = "}  // namespace\n}  // namespace
//                                              impl\n"});
//
// Wrapping keeps the text in its order. The leading block of preprocessor lines, comments and
// blank lines stays outside (it is where includes and `// kforge: flags` live); the scope opens
// after it, at a line where no #if is open, and closes at the end. An #include met later (the
// generated prelude includes <immintrin.h> under `#if defined(__AVX512F__)` next to the helper
// that needs it) must not land inside a namespace, so the scope is closed just before such a
// line and reopened just after it: both in the same #if branch, so every branch stays balanced.
// An #include inside braces (a function body) is left alone.
//
// The scanner knows comments, string and character literals (raw strings and digit separators
// included), directive lines with their continuations, and braces; it reads any text in one
// linear pass and never fails: a source the judge compiled is well formed, and any other text
// still gives some output (which a compiler then judges).
#pragma once

#include <string>
#include <string_view>

namespace kf {

struct SourceUse {
  bool openmp_pragmas = false;  // `#pragma omp ...`: parallel loops, serial without OpenMP
  bool openmp_calls = false;    // an omp_* function or <omp.h>: needs the OpenMP runtime
  bool threads = false;         // std::thread, std::jthread, <thread> or pthread_*
  bool kernel_header = false;   // includes kforge/kernel.h
};

SourceUse scan_source_use(std::string_view source);

struct WrapSpec {
  std::string open;   // opens the scope, e.g. "namespace a {\n"; ends with a newline
  std::string close;  // closes it, e.g. "}  // namespace a\n"; ends with a newline
};

// `source` with its definitions inside `spec`'s scope (see the top of this file).
std::string wrap_source(std::string_view source, const WrapSpec& spec);

}  // namespace kf
