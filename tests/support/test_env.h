// Shared helpers for tests that run the judge: where the source tree is, and a machine
// description for the roofline that does not depend on the probe's timing noise.
#pragma once

#include <filesystem>

#include "harness/evaluator.h"
#include "harness/machine.h"

namespace kf::testing {

inline std::filesystem::path source_dir() {
  return KFORGE_TEST_SOURCE_DIR;
}

// Measured limits of this machine (cached per fingerprint, so measured once per test cache).
inline MachineLimits machine_limits(int threads = 1) {
  auto m = probe_machine({});
  KF_CHECK(m.has_value()) << m.error().message();
  return {.peak_gflops = m->peak_gflops(threads),
          .dram_gbps = m->dram_gbps(threads),
          .cache_gbps = m->cache_gbps_1t * threads,
          .fingerprint = m->fingerprint};
}

}  // namespace kf::testing
