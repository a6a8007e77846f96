// The machine probe's C++ source (harness/machine.cpp compiles and runs it): the fp32 FMA peak
// and the triad bandwidth (DRAM and L2) on 1 and all threads, printed as one JSON object.
#pragma once

namespace kf {

extern const char* const kMachineProbeSource;

}  // namespace kf
