// The machine probe: what this CPU is (model, ISA, cores, caches, compilers) and what it can do
// (fp32 FMA peak, DRAM and L2 triad bandwidth). The roofline behind the "suspicious" verdict,
// the cost model and reports read these figures; the machine fingerprint is part of every
// evaluation key, so results measured on another machine are never reused here.
//
//   MachineInfo m = describe_machine();            // static facts only, a few ms
//   Expected<MachineInfo> p = probe_machine();     // + measurements, cached per fingerprint
//   if (!p) return p.error();
//   double roof = std::min(p->peak_gflops(4), intensity * p->dram_gbps(4));
//
// Measurements never run inside kforge (built without -march=native): probe_machine() compiles
// a small probe program (embedded in machine.cpp) with `{cxx} -O3 -march=native -fopenmp`,
// runs it and parses its JSON. The binary is cached under cache_dir()/machine/ by a hash of
// its source, the compiler and the machine; the results in
// cache_dir()/machine/<fingerprint>.json, reused until `refresh`. Each figure is the fastest of
// several repetitions: a ceiling, as a roofline needs (on a shared VM a median also measures
// the neighbours). Between runs the figures still move by 10-30%.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/status.h"

namespace kf {

struct MachineInfo {
  std::string cpu_model;         // /proc/cpuinfo "model name"
  std::vector<std::string> isa;  // e.g. sse4_2 avx avx2 fma avx512f avx512bw ... (kernel names)
  int cores = 0;                 // CPUs this process may use (sched_getaffinity)
  int numa_nodes = 1;            // memory nodes (/sys/devices/system/node/node*; 1 if hidden)
  // L1d and L2 per core, L3 per cache instance as CPUID reports it (in a VM that may be the
  // host's whole socket). CPUID first (sysfs is hidden in some VMs), then sysfs; 0 if unknown.
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;
  std::string cxx_version, clang_version;  // first line of `--version`, "" if absent

  // Measured, each the fastest of several repetitions. GB/s count 3 arrays x 4 bytes/element.
  double peak_gflops_1t = 0, peak_gflops_all = 0;  // fp32 FMA peak, 1 thread and `cores`
  double dram_gbps_1t = 0, dram_gbps_all = 0;      // triad on arrays far beyond L3
  double cache_gbps_1t = 0;                        // triad on a 256 KiB (L2) working set

  std::string fingerprint;  // hash of model, isa, cores, cache sizes, cxx_version
  std::string probed_at;    // ISO 8601 UTC time of the measurement, "" if not measured

  nlohmann::json to_json() const;
  // Fails with a message naming the first missing or mistyped field. Extra fields are ignored.
  static Expected<MachineInfo> from_json(const nlohmann::json& j);

  // Linear interpolation between the 1-thread figure and the all-cores one; threads <= 1 gives
  // the 1-thread figure and threads >= cores the all-cores one.
  double peak_gflops(int threads) const;
  double dram_gbps(int threads) const;
};

struct ProbeOptions {
  bool refresh = false;  // ignore the cached result and measure again
  double seconds = 2.0;  // rough time budget for the measurements (compiling not included)
  std::string cxx = "g++";
};

// Static facts only (no measurement): model, isa, cores, caches, compilers, fingerprint.
// Never fails; unknown facts stay empty or 0. `cxx` is the compiler whose version is recorded.
MachineInfo describe_machine(const std::string& cxx = "g++");

// describe_machine() plus measurements, from cache_dir()/machine/<fingerprint>.json unless
// `refresh` or absent. Fails if the compiler is missing, the probe does not compile or run, its
// output is not plausible, or the cache cannot be written.
Expected<MachineInfo> probe_machine(const ProbeOptions& options = {});

// Where probe_machine() keeps the measurements for a machine with this fingerprint.
std::filesystem::path machine_cache_file(const std::string& fingerprint);

}  // namespace kf
