// Where the compiler runs: a fresh build directory the jail's id owns, and the jail itself
// (harness/jail.h) with the compile's limits, a scrubbed environment and stdin from /dev/null.
// The toolchain (harness/toolchain.h) runs every program that reads a solution's text here: the
// compiler driver and what it starts (cc1plus, as, ld), and nm on the built object.
//
//   auto dir = BuildDir::make();                    // /tmp/kforge-compile-XXXXXX, jail-owned
//   CompilerLimits lim{.timeout_s = 60};
//   Expected<ProcessResult> r = run_compiler({resolve_program("g++"), ...}, (*dir)->path(), lim);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/fs.h"
#include "support/status.h"
#include "support/subprocess.h"

namespace kf {

struct CompilerLimits {
  double timeout_s = 60;                      // wall clock, and each process's CPU time
  size_t memory_limit = size_t{3} << 30;      // address space of each process
  size_t max_file_bytes = size_t{256} << 20;  // the largest file it may write
  size_t max_output = size_t{1} << 20;        // bytes kept of each of stdout and stderr
};

// A compile's directory: made for the jail's id (which cannot enter a root-owned mkdtemp
// directory) and removed with everything in it when the object dies.
class BuildDir {
 public:
  static Expected<std::unique_ptr<BuildDir>> make();
  ~BuildDir();
  BuildDir(const BuildDir&) = delete;
  BuildDir& operator=(const BuildDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  explicit BuildDir(fs::path p) : path_(std::move(p)) {}
  fs::path path_;
};

// `name` looked up in the judge's PATH (the jail starts programs by absolute path); a name with
// a '/' is made absolute; a name not found is returned as it is (the start then fails).
std::string resolve_program(const std::string& name);

// The compiler's whole environment: nothing of the judge's; a fixed PATH with the program's own
// directory first, the C locale (plain ASCII messages) and temporary files in `dir`.
std::vector<std::string> compiler_env(const fs::path& dir, const std::string& program);

// The directory a toolchain outside the system trees is installed in, which its compile may
// read and run: /opt/gcc-14 for /opt/gcc-14/bin/g++ (symlinks resolved). None for a program
// under /usr or /lib (the jail's system trees), or one whose prefix would be a top-level
// directory of the host.
std::optional<fs::path> toolchain_prefix(const std::string& program);

// Runs argv (argv[0] absolute) in the jail with `dir` as its working directory and the only
// place it may write. Fails only when the jail cannot start it (an incomplete sandbox without
// --unsafe-sandbox included); a limit hit is in the result (timed_out, signal, output size).
Expected<ProcessResult> run_compiler(const std::vector<std::string>& argv, const fs::path& dir,
                                     const CompilerLimits& limits);

}  // namespace kf
