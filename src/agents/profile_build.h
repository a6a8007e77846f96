// The profiler's own build of a candidate: compiles the candidate and its entry shim to an
// object with the judge's base flags (harness/toolchain.h base_flags(), without linking) plus
// GCC's vectorization report, then disassembles the object. Runs in a temporary directory and
// never goes through the toolchain's object cache, so the report is always fresh.
//
//   ProfileToolOptions o;                       // g++, objdump, both stages
//   ProfileToolOutput out = run_profile_tools(task, source, o);
//   if (!out.report_error.empty()) say("vectorization report unavailable: " + out.report_error);
//   VectorizationReport r = parse_vectorization_report(out.compiler_output, source);
//   InstructionMix mix = count_instructions(out.disassembly, task.function);
//
// Failures of the tools (a missing compiler or objdump, a compile error, a timeout) are data:
// they land in report_error / disassembly_error, never abort the profile.
#pragma once

#include <string>
#include <vector>

#include "task/task.h"

namespace kf::agents {

struct ProfileToolOptions {
  std::string cxx = "g++";  // clang++ compiles, but has no GCC-style report
  std::string objdump = "objdump";
  double timeout_s = 120;       // per tool run
  bool compiler_report = true;  // compile with -fopt-info-vec-optimized/-missed
  bool disassembly = true;      // objdump the object
};

struct ProfileToolOutput {
  bool compiled = false;          // the object was built
  std::string command;            // the compiler invocation
  std::string compiler_output;    // the compiler's stderr + stdout (the opt-info report)
  std::string report_error;       // why there is no report; "" when there is one or none was asked
  std::string disassembly;        // objdump's output
  std::string disassembly_error;  // why there is none; "" when there is one or none was asked
};

ProfileToolOutput run_profile_tools(const Task& task, const std::string& source,
                                    const ProfileToolOptions& options);

// The flags of the profiler's compile: base_flags() without -shared and linker flags, plus
// -c, the source's whitelisted `// kforge: flags`, and (for GCC, when `report`) the
// opt-info flags. Fails naming a requested flag that is not on the whitelist.
Expected<std::vector<std::string>> profile_compile_flags(const std::string& source,
                                                         const std::string& cxx, bool report);

}  // namespace kf::agents
