// Backends: how kernels for one kind of hardware are probed for, compiled, run and profiled. A
// backend is a table of operations listed once, in backends(), in a fixed order with the CPU
// first; nothing registers itself, so the list is deterministic and greppable. The judge and the
// modes reach the hardware a candidate runs on only through its backend: a new kind of hardware
// (CUDA) is one more entry and the functions it points at, and the contract suite
// (tests/contract/backend_contract_test.cpp) runs it the moment it is listed.
//
//   auto b = backend_named("cpu");                          // or backend_of(target)
//   Expected<MachineInfo> m = (*b)->probe({});                // once per run
//   Expected<Target> t = (*b)->target("", *m);                // the widest the machine runs
//   CompiledObject o = (*b)->compile(source, entry_shim(task, ShimKind::candidate), opts);
//   auto w = (*b)->start_worker(spec);                        // one per solution and shape
//
// Call order: supports → probe → target → compile → start_worker; profile_tools whenever a
// profile is wanted. Every operation reports bad input or a failing environment as a Status,
// never by throwing; a candidate that fails to compile or dies is data (CompiledObject::info,
// Worker::fault), as everywhere in the judge.
//
// What stays on the host whatever the backend: the f64 oracle, the task's reference and its
// library baseline are plain C++ for the CPU (the judge compiles and runs them with cpu_backend()).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/machine.h"
#include "harness/sandbox.h"
#include "harness/shim.h"
#include "harness/target.h"
#include "harness/toolchain.h"
#include "support/status.h"

namespace kf {

// The tools the profiler reads a build with.
struct ProfileTools {
  std::string disassembler;           // program that disassembles an object ("" when there is none)
  bool vectorization_report = false;  // the compiler writes a GCC-style -fopt-info report
};

struct Backend {
  std::string_view name;  // as `--backend` and Target::backend spell it
  std::string_view description;
  // The backend's targets, widest first.
  std::vector<std::string> (*target_names)();
  // Ok when `machine` can run this backend's kernels; else why not, in words a user can act on.
  Status (*supports)(const MachineInfo& machine);
  // The machine's description and measured ceilings (cached per fingerprint).
  Expected<MachineInfo> (*probe)(const ProbeOptions& options);
  // Target `name` of this backend ("" or "native": the widest `machine` runs). Fails for a name
  // the backend does not know or one the machine cannot run.
  Expected<Target> (*target)(const std::string& name, const MachineInfo& machine);
  // Compiles a solution's unit and the judge's entry unit into one loadable object (see
  // toolchain.h for the limits and the cache). Never fails: every problem is in the result's info.
  CompiledObject (*compile)(const std::string& source, const EntryShim& shim,
                            const CompileOptions& options);
  // Starts a sandboxed worker around one compiled object (see sandbox.h).
  Expected<std::unique_ptr<Worker>> (*start_worker)(const WorkerSpec& spec);
  // The profiler's tools for objects built with compiler `cxx`.
  ProfileTools (*profile_tools)(const std::string& cxx);
};

// Every backend kforge has, CPU first.
const std::vector<const Backend*>& backends();
// The names of backends(), in order.
std::vector<std::string> backend_names();
// Fails naming the known backends.
Expected<const Backend*> backend_named(std::string_view name);
// The CPU backend (the host: the oracle, references and baselines run there).
const Backend& cpu_backend();
// The backend `target` belongs to. A target names a backend in backends() (KF_CHECK).
const Backend& backend_of(const Target& target);

}  // namespace kf
