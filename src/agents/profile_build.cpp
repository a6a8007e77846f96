#include "agents/profile_build.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/compiler_jail.h"
#include "harness/shim.h"
#include "harness/toolchain.h"
#include "support/fs.h"
#include "support/subprocess.h"

namespace kf::agents {
namespace {

bool is_clang(const std::string& cxx) {
  return cxx.find("clang") != std::string::npos;
}

std::string describe(const ProcessResult& r, double timeout_s) {
  if (r.timed_out) return fmt::format("timed out after {:.0f} s", timeout_s);
  if (r.signal != 0) return fmt::format("killed by signal {}", r.signal);
  if (r.exit_code == 127) return "exit code 127: not found or not executable";
  return fmt::format("exit code {}", r.exit_code);
}

// The first error the compiler reported, or the output's last line.
std::string first_error(const std::string& log) {
  for (const Diagnostic& d : parse_diagnostics(log))
    if (d.severity == "error")
      return d.file.empty() ? d.message
                            : fmt::format("{}:{}:{}: {}", d.file, d.line, d.column, d.message);
  std::string s = log;
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

Expected<std::vector<std::string>> profile_compile_flags(const std::string& source,
                                                         const std::string& cxx, bool report) {
  auto requested = requested_flags(source);
  if (!requested) return requested.error();
  std::vector<std::string> flags;
  for (const std::string& f : base_flags())
    if (f != "-shared" && f.rfind("-Wl,", 0) != 0 && f.rfind("-I", 0) != 0) flags.push_back(f);
  flags.insert(flags.end(), requested->begin(), requested->end());
  flags.push_back("-c");
  if (report && !is_clang(cxx))
    flags.insert(flags.end(), {"-fopt-info-vec-optimized", "-fopt-info-vec-missed",
                               "-fdiagnostics-column-unit=byte"});
  return flags;
}

ProfileToolOutput run_profile_tools(const Task& task, const std::string& source,
                                    const ProfileToolOptions& options) {
  ProfileToolOutput out;
  if (!options.compiler_report && !options.disassembly) return out;
  const bool report = options.compiler_report && !is_clang(options.cxx);
  auto fail_both = [&](const std::string& why) {
    if (options.compiler_report) out.report_error = why;
    if (options.disassembly) out.disassembly_error = why;
    return out;
  };
  if (options.compiler_report && !report)
    out.report_error = fmt::format(
        "{} has no GCC-style vectorization report (-fopt-info); profile with g++", options.cxx);
  if (!report && !options.disassembly) return out;  // nothing left to build for

  auto flags = profile_compile_flags(source, options.cxx, report);
  if (!flags) return fail_both(flags.error().message());
  // The candidate's text is compiled, and its object read, in the compiler's jail, as the
  // judge's own compile is: the profiler sees the same hostile input.
  auto dir = BuildDir::make();
  if (!dir) return fail_both(dir.error().message());
  const fs::path src = (*dir)->path() / "candidate.cpp";
  const fs::path obj = (*dir)->path() / "candidate.o";
  const std::string full = "#line 1 \"candidate.cpp\"\n" + source +
                           "\n#line 1 \"kforge_entry.cpp\"\n" +
                           entry_shim(task, ShimKind::candidate).bind;
  if (Status st = write_file_atomic(src, full); !st.ok()) return fail_both(st.message());
  auto include = write_kernel_header((*dir)->path());
  if (!include) return fail_both(include.error().message());

  const std::string cxx = resolve_program(options.cxx), objdump = resolve_program(options.objdump);
  if (!fs::path(cxx).is_absolute()) return fail_both(options.cxx + ": not found");
  std::vector<std::string> argv = {cxx};
  argv.insert(argv.end(), flags->begin(), flags->end());
  argv.insert(argv.end(), {"-I" + include->string(), src.string(), "-o", obj.string()});
  out.command = fmt::format("{}", fmt::join(argv, " "));
  const CompilerLimits limits{.timeout_s = options.timeout_s, .max_output = size_t{4} << 20};
  auto cc = run_compiler(argv, (*dir)->path(), limits);
  if (!cc) return fail_both(fmt::format("cannot run {}: {}", options.cxx, cc.error().message()));
  out.compiler_output = cc->err + cc->out;
  if (!cc->ok())
    return fail_both(fmt::format("{} failed ({}): {}", options.cxx,
                                 describe(*cc, options.timeout_s),
                                 first_error(out.compiler_output)));
  out.compiled = true;
  if (!options.disassembly) return out;

  if (!fs::path(objdump).is_absolute()) {
    out.disassembly_error = options.objdump + ": not found";
    return out;
  }
  auto od = run_compiler(
      {objdump, "-d", "-r", "--no-show-raw-insn", "-M", "intel", "-C", obj.string()},
      (*dir)->path(), {.timeout_s = options.timeout_s, .max_output = size_t{64} << 20});
  if (!od) {
    out.disassembly_error = fmt::format("cannot run {}: {}", options.objdump, od.error().message());
    return out;
  }
  if (!od->ok()) {
    out.disassembly_error = fmt::format("{} failed ({}): {}", options.objdump,
                                        describe(*od, options.timeout_s), first_error(od->err));
    return out;
  }
  out.disassembly = std::move(od->out);
  return out;
}

}  // namespace kf::agents
