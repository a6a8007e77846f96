// The toolchain: compiles one solution (a C++ translation unit plus its entry shim) into a shared
// object with fixed flags, caching objects on disk by content hash so an unchanged solution is
// never compiled twice.
//
//   CompileOptions opt;                       // g++, -O3 -march=native -fopenmp ...
//   CompileInfo info = compile_solution(source, entry_shim(task, ShimKind::candidate), opt);
//   if (!info.ok) show(info.diagnostics);     // compiler messages as data
//   load(info.so_path);
//
// Flags: a candidate may ask for extra flags from a short whitelist with a first-line comment
// `// kforge: flags -ffast-math -funroll-loops`; anything else is a compile_error.
#pragma once

#include <string>
#include <vector>

#include "harness/run_result.h"
#include "support/status.h"

namespace kf {

struct CompileOptions {
  std::string cxx = "g++";                 // or "clang++"
  std::vector<std::string> extra_flags;    // checked against the whitelist
  std::vector<std::string> libs;           // -l names; only for trusted baselines
  double timeout_s = 120;
  bool use_cache = true;
};

struct CompiledObject {
  CompileInfo info;
  std::string so_path;                         // valid when info.ok
  std::vector<std::string> interposed_symbols;  // C-library symbols the object defines
};

// The flags every solution is compiled with (before extra flags).
std::vector<std::string> base_flags();
// The whitelist for extra flags.
const std::vector<std::string>& allowed_extra_flags();

// Flags requested in the source's `// kforge: flags ...` comment. Fails naming a flag that is
// not on the whitelist.
Expected<std::vector<std::string>> requested_flags(const std::string& source);

CompiledObject compile_solution(const std::string& source, const std::string& shim,
                                const CompileOptions& options);

// Parses "file:line:col: severity: message" lines (GCC and Clang).
std::vector<Diagnostic> parse_diagnostics(const std::string& log);

// Runtime libraries the compiler's objects need initialized before the sandbox closes
// (clang's OpenMP runtime, libomp); empty for g++.
std::vector<std::string> runtime_preload(const std::string& cxx);

// Identity of the compiler and the target (memoized): part of every cache key.
std::string toolchain_identity(const std::string& cxx);

}  // namespace kf
