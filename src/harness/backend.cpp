#include "harness/backend.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kf {
namespace {

// The CPU: C++ compiled by the host's compiler into a shared object, run by kforge-worker
// (memfd buffers, dlopen, the jail and the seccomp filter), profiled with GCC's vectorization
// report and objdump.
Status cpu_supports(const MachineInfo& machine) {
  if (machine.cores < 1)
    return Status::error("the machine description names no CPU this process may use");
  return ok_status();
}

ProfileTools cpu_profile_tools(const std::string& cxx) {
  return {.disassembler = "objdump",
          .vectorization_report = cxx.find("clang") == std::string::npos};
}

// compile_solution is overloaded: this picks the one with the judge's entry shim.
CompiledObject cpu_compile(const std::string& source, const EntryShim& shim,
                           const CompileOptions& options) {
  return compile_solution(source, shim, options);
}

const Backend kCpu{
    .name = "cpu",
    .description = "C++ with SIMD intrinsics and OpenMP threads, run in kforge's CPU sandbox",
    .target_names = target_names,
    .supports = cpu_supports,
    .probe = probe_machine,
    .target = target_named,
    .compile = cpu_compile,
    .start_worker = Worker::start,
    .profile_tools = cpu_profile_tools,
};

}  // namespace

const std::vector<const Backend*>& backends() {
  static const std::vector<const Backend*> list = {&kCpu};
  return list;
}

std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (const Backend* b : backends()) names.emplace_back(b->name);
  return names;
}

Expected<const Backend*> backend_named(std::string_view name) {
  for (const Backend* b : backends())
    if (b->name == name) return b;
  return Status::error(
      fmt::format("unknown backend '{}': kforge has {}", name, fmt::join(backend_names(), ", ")));
}

const Backend& cpu_backend() {
  return kCpu;
}

const Backend& backend_of(const Target& target) {
  auto b = backend_named(target.backend);
  KF_CHECK(b.has_value()) << "target " << target.name << " names backend '" << target.backend
                          << "', which is not in backends()";
  return **b;
}

}  // namespace kf
