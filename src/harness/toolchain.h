// The toolchain: compiles one solution (its translation unit plus the entry shim's, compiled
// apart: harness/shim.h) into a shared object with fixed flags, caching objects on disk by
// content hash so an unchanged solution is never compiled twice.
//
//   CompileOptions opt;                       // g++, -O3 -march=native -fopenmp ...
//   CompiledObject obj = compile_solution(source, entry_shim(task, ShimKind::candidate), opt);
//   if (!obj.info.ok) show(obj.info.diagnostics);   // compiler messages as data
//   load(obj.so_path);
//
// The compiler is hostile input's first reader, so it runs confined (harness/compiler_jail.h):
// in the jail, in a fresh build directory holding only the solution's unit and kforge/kernel.h,
// with a scrubbed environment, stdin from /dev/null, limits on wall clock, CPU time, address space
// and the size of every file it writes. The entry unit is the judge's own text: its object is
// compiled once per task and kind and kept in the cache. `#include` is limited to the compiler's
// system headers and kforge/kernel.h: a literal path outside them is refused before compiling,
// one spelled through a macro after (from the `-H` list, or the error naming a path it could not
// open), and no diagnostic located in another file reaches the log (harness/compiler_output.h).
// An object larger than max_object_bytes is refused and never cached.
//
// Flags: a candidate may ask for extra flags from a short whitelist with a comment in its first
// five lines, `// kforge: flags -ffast-math -funroll-loops`; anything else is a compile_error.
#pragma once

#include <string>
#include <vector>

#include "harness/compiler_output.h"
#include "harness/run_result.h"
#include "harness/shim.h"
#include "support/status.h"

namespace kf {

struct CompileOptions {
  std::string cxx = "g++";                     // or "clang++"
  std::vector<std::string> extra_flags;        // checked against the whitelist
  std::vector<std::string> libs;               // -l names; only for trusted baselines
  double timeout_s = 60;                       // wall clock; also each compiler process's CPU time
  size_t memory_limit = size_t{3} << 30;       // address space of each compiler process
  size_t max_file_bytes = size_t{256} << 20;   // the largest file the compiler may write
  size_t max_object_bytes = size_t{64} << 20;  // the largest shared object accepted and cached
  bool use_cache = true;
};

struct CompiledObject {
  CompileInfo info;
  std::string so_path;                          // valid when info.ok
  std::vector<std::string> interposed_symbols;  // C-library symbols the object defines
};

// The flags every solution is compiled with (before extra flags). Its `-I` names kforge's runtime
// headers; compile_solution replaces it with its build directory's copy of kforge/kernel.h.
std::vector<std::string> base_flags();
// The whitelist for extra flags.
const std::vector<std::string>& allowed_extra_flags();

// Flags requested in the source's `// kforge: flags ...` comment. Fails naming a flag that is
// not on the whitelist.
Expected<std::vector<std::string>> requested_flags(const std::string& source);

// Writes kforge/kernel.h into `build_dir`/include, the -I directory of a jailed compile (the
// jail cannot read kforge's own tree); returns that directory.
Expected<fs::path> write_kernel_header(const fs::path& build_dir);

// Compiles `source` + shim.bind as one translation unit and shim.entry as another, linked into
// one shared object with -z defs: a missing function or one with other parameter types is a
// compile error that names the signature expected. Never fails: every problem is in info.
CompiledObject compile_solution(const std::string& source, const EntryShim& shim,
                                const CompileOptions& options);
// A solution with its own entry: `entry_unit` (may be empty) is compiled as a second unit.
CompiledObject compile_solution(const std::string& source, const std::string& entry_unit,
                                const CompileOptions& options);

// Runtime libraries the compiler's objects need initialized before the sandbox closes
// (clang's OpenMP runtime, libomp); empty for g++.
std::vector<std::string> runtime_preload(const std::string& cxx);

// Identity of the compiler and the target (memoized): part of every cache key.
std::string toolchain_identity(const std::string& cxx);

}  // namespace kf
