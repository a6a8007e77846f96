#include <gtest/gtest.h>

#include "agents/profile_findings.h"

namespace kf::agents {
namespace {

MachineInfo avx512_machine() {
  MachineInfo m;
  m.isa = {"avx2", "fma", "avx512f"};
  return m;
}

size_t index_of(const std::vector<std::string>& findings, const std::string& prefix) {
  for (size_t i = 0; i < findings.size(); ++i)
    if (findings[i].rfind(prefix, 0) == 0) return i;
  return findings.size();
}

TEST(ProfileFindings, Formatting) {
  EXPECT_EQ(format_number(12.44), "12.4");
  EXPECT_EQ(format_number(35.0), "35");
  EXPECT_EQ(format_number(0.35), "0.35");
  EXPECT_EQ(format_number(410.4), "410");
  EXPECT_EQ(format_number(3.333), "3.33");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(48 << 10), "48 KiB");
  EXPECT_EQ(format_bytes(1.5 * (1 << 20)), "1.5 MiB");
  EXPECT_EQ(format_bytes(2.0 * (1 << 30)), "2 GiB");
  EXPECT_EQ(format_seconds(1.4e-3), "1.4 ms");
  EXPECT_EQ(format_seconds(2.5e-6), "2.5 us");
  EXPECT_EQ(format_seconds(12e-9), "12 ns");
  EXPECT_EQ(format_seconds(3), "3 s");
}

TEST(ProfileFindings, ComputeBoundKernelInImportanceOrder) {
  Profile p;
  p.verdict = "ok";
  p.roofline = {.known = true,
                .bound = "compute",
                .gflops = 25.1,
                .gbps = 1,
                .peak_gflops = 210,
                .peak_gbps = 36,
                .attainable_gflops = 210,
                .fraction = 25.1 / 210,
                .intensity = 170,
                .headroom = 210 / 25.1};
  p.tags.compute_bound = true;
  p.thread_use = {.known = true, .requested = 2, .cpus_busy = 1.5};
  p.vectorization.available = true;
  p.vectorization.hot_loops = 3;
  p.vectorization.missed = 2;
  p.vectorization.vectorized = 1;
  p.vectorization.missed_loops = {
      {41, "for (int64_t k = 0; k < K; ++k) {", "not vectorized: complicated access pattern", 42},
      {50, "for (int64_t j = 0; j < N; ++j)", "couldn't vectorize loop", 50}};
  p.instructions.available = true;
  p.instructions.innermost_loops = 2;
  p.instructions.loops = {.total = 40, .fma_ymm = 12, .fma_scalar = 6, .gathers = 2};
  p.working_set = {.bytes = 12 << 20, .bytes_per_thread = 6 << 20, .level = "L3"};
  const std::vector<std::string> f = profile_findings(p, avx512_machine());
  ASSERT_GE(f.size(), 6u);
  EXPECT_EQ(f[0],
            "compute-bound at 12% of the FMA peak (25.1 of 210 GFLOP/s, 170 FLOP/byte): up to "
            "8.37x headroom");
  EXPECT_EQ(f[1],
            "threads: 1.5 of 2 CPUs busy: part of each call is serial, imbalanced or waiting");
  EXPECT_EQ(f[2],
            "2 of 3 hot loops not vectorized: line 41 `for (int64_t k = 0; k < K; ++k) {`: not "
            "vectorized: complicated access pattern; line 50 `for (int64_t j = 0; j < N; ++j)`: "
            "couldn't vectorize loop");
  EXPECT_EQ(f[3],
            "no 512-bit FMAs: 0 of 18 FMAs in the innermost loops are packed zmm (12 ymm, 0 xmm, "
            "6 scalar)");
  EXPECT_LT(index_of(f, "2 gather instructions"), index_of(f,
                                                           "working set 12 MiB (6 MiB per "
                                                           "thread): fits in L3"));
  EXPECT_LT(index_of(f, "working set"), index_of(f, "static instruction mix"));
  EXPECT_LT(index_of(f, "static instruction mix"), f.size());
}

TEST(ProfileFindings, NoAvx512NoZmmComplaint) {
  Profile p;
  p.instructions.available = true;
  p.instructions.all = {.total = 10, .fma_ymm = 4};
  for (const std::string& s : profile_findings(p, MachineInfo{}))
    EXPECT_EQ(s.find("512-bit"), std::string::npos) << s;
}

TEST(ProfileFindings, CacheResidentDataBeatsTheDramRoof) {
  Profile p;
  p.roofline = {.known = true, .bound = "memory", .gbps = 90, .peak_gbps = 36, .fraction = 2.5};
  p.working_set = {.bytes = 1 << 20, .bytes_per_thread = 1 << 20, .level = "L2"};
  const std::vector<std::string> f = profile_findings(p, MachineInfo{});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0],
            "memory-bound by the DRAM roofline, yet at 250% of DRAM bandwidth (90 of 36 GB/s): "
            "the data is served from cache (working set fits L2)");
}

TEST(ProfileFindings, NarrowVectorsAreNamed) {
  Profile p;
  p.vectorization.available = true;
  p.vectorization.hot_loops = 1;
  p.vectorization.vectorized = 1;
  p.vectorization.widest_bytes = 8;
  p.vectorization.narrow_loops = {
      {11, "for (int64_t C_k = 0; C_k < K; ++C_k) {", "8-byte vectors", 11}};
  const std::vector<std::string> f = profile_findings(p, MachineInfo{});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[1],
            "1 hot loop(s) vectorized with only 8-byte vectors (two floats): line 11 `for "
            "(int64_t C_k = 0; C_k < K; ++C_k) {`: a strided access GCC could only pair up; make "
            "the innermost loop walk memory contiguously");
  for (const std::string& s : f) EXPECT_EQ(s.find("all 1 hot loops vectorized"), std::string::npos);
}

}  // namespace
}  // namespace kf::agents
