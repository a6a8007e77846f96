// What the compiler prints, turned into data a judge may store and show: diagnostics parsed by
// linear scanners (no std::regex, no recursion: the text is the candidate's to shape), and a log
// that never carries the text of a file outside the allowed include set.
//
//   IncludePolicy p{.allowed_dirs = system_include_dirs("g++"), .build_dir = dir};
//   SanitizedLog s = sanitize_compiler_log(raw_stderr, p);   // the compile ran with -H
//   if (!s.refused_includes.empty()) ...                     // compile_error, log withheld
//   std::vector<Diagnostic> d = parse_diagnostics(s.log);
//
// Rules the sanitizer applies, line by line:
//   - `-H` lines (". /usr/include/c++/12/vector") are taken out of the log and checked: a header
//     outside the allowed directories (system include trees, the build directory) is refused;
//   - a diagnostic located in a file outside the allowed set is withheld (its message and the
//     source lines the compiler echoes under it), so a file's text never reaches the log;
//   - each line is cut at kMaxLineBytes, each diagnostic keeps at most kMaxContextLines echo
//     lines, the whole log at most kMaxLogBytes; invalid UTF-8 becomes U+FFFD.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/run_result.h"
#include "support/fs.h"

namespace kf {

inline constexpr size_t kMaxLineBytes = 1000;
inline constexpr size_t kMaxContextLines = 6;
inline constexpr size_t kMaxLogBytes = 32 * 1024;
inline constexpr size_t kMaxDiagnostics = 100;

struct IncludePolicy {
  std::vector<fs::path> allowed_dirs;  // the compiler's system include directories
  fs::path build_dir;                  // the compile's own directory (sources, kforge/kernel.h)
};

struct SanitizedLog {
  std::string log;                            // safe to store and show
  std::vector<std::string> refused_includes;  // headers outside the policy, in include order
};

SanitizedLog sanitize_compiler_log(std::string_view raw, const IncludePolicy& policy);

// True when `file` (as the compiler names it: absolute, or relative to the build directory) lies
// inside the policy's directories. Lexical: "..", "." and repeated slashes are resolved first.
bool include_allowed(std::string_view file, const IncludePolicy& policy);

// True for an include operand that is an absolute path or climbs with "..": never a system
// header or kforge/kernel.h.
bool include_path_outside(std::string_view path);

// The first `#include`/`#include_next`/`#import`/`#embed` in the source whose literal operand is an
// absolute path or climbs with "..", if any: refused before the compiler runs. Includes spelled
// through macros are caught afterwards from the compiler's -H list.
std::optional<std::string> literal_include_outside(std::string_view source);

// Parses "file:line:col: severity: message" and "file:line: severity: message" lines (GCC and
// Clang) plus the linker's errors; linear in the log's length.
std::vector<Diagnostic> parse_diagnostics(std::string_view log);

// `s` with every invalid UTF-8 sequence replaced by U+FFFD and NUL bytes dropped.
std::string valid_utf8(std::string_view s);

// The compiler's search list for `#include <...>` ("g++ -xc++ -E -v /dev/null"), memoized.
std::vector<fs::path> system_include_dirs(const std::string& cxx);

}  // namespace kf
