// The code target a candidate is generated and compiled for: which vector ISA the kernel
// generator emits, what the compiler may use, and the figures the built-in brain sizes its tiles
// by. Derived from the machine probe, or forced (`kforge optimize --target avx2` on an AVX-512
// machine, to produce kernels for AVX2-only machines).
//
//   const Target t = target_for(machine);             // avx512 where the probe says avx512f
//   Expected<Target> f = target_named("avx2", machine);  // refused where the machine lacks it
//   generate_kernel(task, schedule, {.target = t.codegen});
//   compile.extra_flags = t.compile_flags;             // -mno-avx512f: the object is AVX2 only
#pragma once

#include <string>
#include <vector>

#include "codegen/codegen_cpp.h"
#include "harness/machine.h"
#include "support/status.h"

namespace kf {

struct Target {
  std::string backend = "cpu";  // the backend (harness/backend.h) that compiles and runs it
  std::string name;             // "avx512", "avx2", "scalar"
  CodegenTarget codegen = CodegenTarget::avx512;
  int vector_registers = 32;  // architectural vector registers a register tile may fill
  int f32_lanes = 16;         // f32 lanes of one vector register
  // Flags every candidate of this target is compiled with (on top of -march=native), so that
  // the compiler's own vectorization keeps to the target too.
  std::vector<std::string> compile_flags;
};

// The targets kforge knows, widest first.
std::vector<std::string> target_names();

// The widest target `machine` runs: avx512 (avx512f), avx2 (avx2 and fma), else scalar.
Target target_for(const MachineInfo& machine);

// Target `name` ("" or "native": target_for(machine)). Fails for an unknown name, or a target
// whose instructions `machine` lacks (its kernels would die of SIGILL).
Expected<Target> target_named(const std::string& name, const MachineInfo& machine);

}  // namespace kf
