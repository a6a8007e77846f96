#include "harness/compiler_jail.h"

#include <stdlib.h>
#include <unistd.h>

#include <sstream>

#include "harness/jail.h"

namespace kf {

Expected<std::unique_ptr<BuildDir>> BuildDir::make() {
  auto dir = make_jail_dir("kforge-compile");
  if (!dir) return dir.error();
  return std::unique_ptr<BuildDir>(new BuildDir(*dir));
}

BuildDir::~BuildDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string resolve_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::absolute(name).string();
  const char* path = getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  std::string d;
  while (std::getline(dirs, d, ':')) {
    fs::path p = fs::path(d.empty() ? "." : d) / name;
    if (access(p.c_str(), X_OK) == 0) return fs::absolute(p).string();
  }
  return name;
}

std::vector<std::string> compiler_env(const fs::path& dir, const std::string& program) {
  const std::string bin = fs::path(program).parent_path().string();
  return {"PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin", "LC_ALL=C", "TMPDIR=" + dir.string()};
}

std::optional<fs::path> toolchain_prefix(const std::string& program) {
  std::error_code ec;
  const fs::path real = fs::canonical(program, ec);
  if (ec || !real.has_parent_path()) return std::nullopt;
  for (const char* tree : {"/usr/", "/lib/", "/lib64/"})
    if (real.string().starts_with(tree)) return std::nullopt;
  fs::path prefix = real.parent_path();
  if (prefix.filename() == "bin") prefix = prefix.parent_path();
  // Never a whole top-level tree of the host (/, /home, /root, /opt): a toolchain installed
  // straight into one has to be moved under its own directory.
  if (prefix.empty() || prefix == prefix.root_path() || prefix.parent_path() == prefix.root_path())
    return std::nullopt;
  return prefix;
}

Expected<ProcessResult> run_compiler(const std::vector<std::string>& argv, const fs::path& dir,
                                     const CompilerLimits& limits) {
  std::vector<fs::path> toolchain;
  if (!argv.empty())
    if (auto prefix = toolchain_prefix(argv[0])) toolchain.push_back(*prefix);
  JailSpec spec{.argv = argv,
                .env = compiler_env(dir, argv.empty() ? "" : argv[0]),
                .cwd = dir,
                .read_exec = toolchain,
                .read_write = {dir},
                .limits = {.address_space = limits.memory_limit,
                           .cpu_s = limits.timeout_s,
                           .file_size = limits.max_file_bytes}};
  return run_jailed(spec, limits.timeout_s, limits.max_output);
}

}  // namespace kf
