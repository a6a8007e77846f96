// The sentences of a Profile: what the figures mean for the next optimization, most important
// first, each with its numbers so a person or an LLM can act on it without the raw data:
//
//   memory-bound at 35% of DRAM bandwidth (12.4 of 35.5 GB/s, 0.25 FLOP/byte): up to 2.86x
//     headroom
//   threads: 1 of 2 CPUs busy: the kernel runs serially
//   2 of 3 hot loops not vectorized: line 41 `for (k...)`: not vectorized: complicated access
//     pattern
//   no 512-bit FMAs: 0 of 18 FMAs in the innermost loops are packed zmm (18 ymm, 0 xmm, 0 scalar)
//   working set 48 MiB: DRAM-resident; each pass over it costs >= 1.4 ms at 35.5 GB/s
//
// Order: verdict, roofline, threads, vectorization, FMA width and scalar work in loops,
// gathers, page faults, working set, context switches, then what is fine (all loops
// vectorized), the static instruction mix, and the stages that could not run.
//
//   std::vector<std::string> f = profile_findings(profile, machine);
#pragma once

#include <string>
#include <vector>

#include "agents/profiler.h"

namespace kf::agents {

// Reads every stage and the tags of `p`; `machine` tells whether AVX-512 is there.
std::vector<std::string> profile_findings(const Profile& p, const MachineInfo& machine);

// Number formatting shared by the findings: 3 significant digits, trailing zeros dropped
// ("12.4", "0.35", "410"); bytes in B/KiB/MiB/GiB ("48 MiB"); seconds in ns/us/ms/s ("1.4 ms").
std::string format_number(double x);
std::string format_bytes(double bytes);
std::string format_seconds(double s);

}  // namespace kf::agents
