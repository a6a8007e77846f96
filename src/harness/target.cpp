#include "harness/target.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace kf {
namespace {

bool has(const MachineInfo& m, const char* feature) {
  return std::find(m.isa.begin(), m.isa.end(), feature) != m.isa.end();
}

Target avx512() {
  return {.name = "avx512",
          .codegen = CodegenTarget::avx512,
          .vector_registers = 32,
          .f32_lanes = 16,
          .compile_flags = {}};
}
Target avx2() {
  return {.name = "avx2",
          .codegen = CodegenTarget::avx2,
          .vector_registers = 16,
          .f32_lanes = 8,
          .compile_flags = {"-mno-avx512f"}};
}
Target scalar() {
  return {.name = "scalar",
          .codegen = CodegenTarget::scalar,
          .vector_registers = 16,
          .f32_lanes = 1,
          .compile_flags = {"-mno-avx512f"}};
}

}  // namespace

std::vector<std::string> target_names() {
  return {"avx512", "avx2", "scalar"};
}

Target target_for(const MachineInfo& machine) {
  if (has(machine, "avx512f")) return avx512();
  if (has(machine, "avx2") && has(machine, "fma")) return avx2();
  return scalar();
}

Expected<Target> target_named(const std::string& name, const MachineInfo& machine) {
  if (name.empty() || name == "native") return target_for(machine);
  Target t;
  if (name == "avx512") {
    t = avx512();
  } else if (name == "avx2") {
    t = avx2();
  } else if (name == "scalar") {
    t = scalar();
  } else {
    return Status::error(fmt::format("unknown target '{}': known targets are native, {}", name,
                                     fmt::join(target_names(), ", ")));
  }
  const std::vector<std::string> names = target_names();
  const auto rank = [&](const std::string& n) {
    return std::find(names.begin(), names.end(), n) - names.begin();
  };
  const Target widest = target_for(machine);
  if (rank(t.name) < rank(widest.name))
    return Status::error(
        fmt::format("target {} needs instructions this machine lacks (its widest "
                    "is {}): its kernels would not run here",
                    t.name, widest.name));
  return t;
}

}  // namespace kf
