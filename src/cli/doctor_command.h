// `kforge doctor`: what kforge knows about this machine — CPU model, ISA extensions, cores,
// cache sizes, compilers — and what it measured: fp32 FMA peak, DRAM and L2 triad bandwidth,
// the machine balance (FLOP per DRAM byte), the fingerprint and where the figures are cached.
//
//   kforge doctor             # measures once (~2 s plus compiling the probe), then cached
//   kforge doctor --refresh   # measure again
//   kforge doctor --json      # MachineInfo as JSON, plus cache_file
//
// main.cpp registers it: add_doctor_command(app). A failure prints "kforge doctor: <why>" on
// stderr and exits with status 1 (through CLI::RuntimeError, which CLI11_PARSE turns into the
// exit code).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_doctor_command(CLI::App& app);

}  // namespace kf
