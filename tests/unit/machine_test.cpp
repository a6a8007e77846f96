// Tests for harness/machine.h: static facts, JSON round trip and errors, interpolation, and the
// probe's cache. Speed figures are only checked to be positive: performance is not a unit test.
#include "harness/machine.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "support/fs.h"
#include "support/json_text.h"

namespace kf {
namespace {

MachineInfo sample() {
  MachineInfo m;
  m.cpu_model = "Test CPU 9000";
  m.isa = {"sse4_2", "avx", "avx2", "fma", "avx512f"};
  m.cores = 4;
  m.numa_nodes = 2;
  m.l1d_bytes = 48 << 10;
  m.l2_bytes = 1 << 20;
  m.l3_bytes = 32 << 20;
  m.cxx_version = "g++ (Debian 12.2.0-14) 12.2.0";
  m.clang_version = "";
  m.peak_gflops_1t = 100;
  m.peak_gflops_all = 400;
  m.dram_gbps_1t = 30;
  m.dram_gbps_all = 60;
  m.cache_gbps_1t = 150.5;
  m.fingerprint = "0123456789abcdef";
  m.probed_at = "2024-01-02T03:04:05Z";
  return m;
}

// Points KFORGE_CACHE_DIR at a fresh directory for the test's lifetime.
class ScopedCacheDir {
 public:
  ScopedCacheDir() {
    if (const char* old = std::getenv("KFORGE_CACHE_DIR")) old_ = old;
    setenv("KFORGE_CACHE_DIR", dir_.path().c_str(), 1);
  }
  ~ScopedCacheDir() {
    if (old_)
      setenv("KFORGE_CACHE_DIR", old_->c_str(), 1);
    else
      unsetenv("KFORGE_CACHE_DIR");
  }
  const fs::path& path() const { return dir_.path(); }

 private:
  TempDir dir_{"kforge-machine-test"};
  std::optional<std::string> old_;
};

TEST(DescribeMachine, ReportsPlausibleFacts) {
  MachineInfo m = describe_machine();
  EXPECT_FALSE(m.cpu_model.empty());
  EXPECT_GE(m.cores, 1);
  EXPECT_GE(m.l1d_bytes, 16 << 10);
  EXPECT_LE(m.l1d_bytes, 1 << 20);
  EXPECT_GE(m.l2_bytes, m.l1d_bytes);
  EXPECT_FALSE(m.fingerprint.empty());
  EXPECT_TRUE(m.probed_at.empty());
  EXPECT_EQ(m.peak_gflops_1t, 0);
}

TEST(DescribeMachine, FingerprintIsStable) {
  MachineInfo a = describe_machine(), b = describe_machine();
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_EQ(a.to_json(), b.to_json());
}

TEST(DescribeMachine, FingerprintDependsOnCompiler) {
  MachineInfo gcc = describe_machine("g++"), none = describe_machine("kforge-no-such-cxx");
  EXPECT_TRUE(none.cxx_version.empty());
  if (!gcc.cxx_version.empty()) {
    EXPECT_NE(gcc.fingerprint, none.fingerprint);
  }
}

TEST(MachineInfoJson, RoundTrips) {
  MachineInfo m = sample();
  auto back = MachineInfo::from_json(m.to_json());
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->to_json(), m.to_json());
  EXPECT_EQ(back->isa, m.isa);
  EXPECT_EQ(back->l2_bytes, m.l2_bytes);
  EXPECT_DOUBLE_EQ(back->cache_gbps_1t, 150.5);
  // Through text too, as the cache stores it.
  auto reparsed = MachineInfo::from_json(nlohmann::json::parse(m.to_json().dump(2)));
  ASSERT_TRUE(reparsed);
  EXPECT_EQ(reparsed->to_json(), m.to_json());
}

TEST(MachineInfoJson, MemoryNodesAreOptionalForOlderCaches) {
  nlohmann::json j = sample().to_json();
  EXPECT_EQ(MachineInfo::from_json(j)->numa_nodes, 2);
  j.erase("numa_nodes");
  auto m = MachineInfo::from_json(j);
  ASSERT_TRUE(m) << m.error().message();
  EXPECT_EQ(m->numa_nodes, 1);
  EXPECT_GE(describe_machine("g++").numa_nodes, 1);
}

TEST(MachineInfoJson, MissingFieldIsNamed) {
  nlohmann::json j = sample().to_json();
  j.erase("cores");
  auto m = MachineInfo::from_json(j);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("'cores'"), std::string::npos) << m.error().message();
}

TEST(MachineInfoJson, MistypedFieldIsNamed) {
  nlohmann::json j = sample().to_json();
  j["peak_gflops_1t"] = "fast";
  auto m = MachineInfo::from_json(j);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("'peak_gflops_1t'"), std::string::npos);
  EXPECT_NE(m.error().message().find("a number"), std::string::npos) << m.error().message();

  j = sample().to_json();
  j["isa"] = {"avx", 2};
  m = MachineInfo::from_json(j);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("'isa'"), std::string::npos) << m.error().message();

  j = sample().to_json();
  j["cores"] = 2.5;
  m = MachineInfo::from_json(j);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("'cores'"), std::string::npos) << m.error().message();
}

TEST(MachineInfoJson, NonObjectFails) {
  EXPECT_FALSE(MachineInfo::from_json(nlohmann::json::array({1, 2})));
  EXPECT_FALSE(MachineInfo::from_json(nlohmann::json("machine")));
}

TEST(MachineInfo, InterpolatesBetweenOneThreadAndAllCores) {
  MachineInfo m = sample();  // 4 cores: 100 -> 400 GFLOP/s, 30 -> 60 GB/s
  EXPECT_DOUBLE_EQ(m.peak_gflops(0), 100);
  EXPECT_DOUBLE_EQ(m.peak_gflops(1), 100);
  EXPECT_DOUBLE_EQ(m.peak_gflops(2), 200);
  EXPECT_DOUBLE_EQ(m.peak_gflops(3), 300);
  EXPECT_DOUBLE_EQ(m.peak_gflops(4), 400);
  EXPECT_DOUBLE_EQ(m.peak_gflops(64), 400);
  EXPECT_DOUBLE_EQ(m.dram_gbps(1), 30);
  EXPECT_DOUBLE_EQ(m.dram_gbps(2), 40);
  EXPECT_DOUBLE_EQ(m.dram_gbps(8), 60);
  m.cores = 1;
  EXPECT_DOUBLE_EQ(m.peak_gflops(1), 100);
  EXPECT_DOUBLE_EQ(m.peak_gflops(2), 400);
}

TEST(ProbeMachine, MissingCompilerIsAClearError) {
  ScopedCacheDir cache;
  ProbeOptions o;
  o.cxx = "kforge-no-such-cxx";
  auto m = probe_machine(o);
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("kforge-no-such-cxx"), std::string::npos)
      << m.error().message();
}

TEST(ProbeMachine, MeasuresAndThenUsesTheCache) {
  if (describe_machine().cxx_version.empty()) GTEST_SKIP() << "g++ is not installed";
  ScopedCacheDir cache;
  ProbeOptions o;
  o.seconds = 0.3;
  auto first = probe_machine(o);
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_GT(first->peak_gflops_1t, 0);
  EXPECT_GT(first->peak_gflops_all, 0);
  EXPECT_GT(first->dram_gbps_1t, 0);
  EXPECT_GT(first->dram_gbps_all, 0);
  EXPECT_GT(first->cache_gbps_1t, 0);
  EXPECT_FALSE(first->probed_at.empty());
  fs::path file = machine_cache_file(first->fingerprint);
  EXPECT_TRUE(fs::exists(file));
  EXPECT_EQ(file.parent_path().parent_path(), cache.path());

  auto second = probe_machine(o);  // from the cache: identical figures, same time stamp
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_EQ(second->probed_at, first->probed_at);
  EXPECT_EQ(second->to_json(), first->to_json());

  // A damaged cache entry is measured again, not trusted.
  ASSERT_TRUE(write_file_atomic(file, "{\"cpu_model\": 3}"));
  auto third = probe_machine(o);
  ASSERT_TRUE(third) << third.error().message();
  EXPECT_GT(third->peak_gflops_1t, 0);
  auto reread = read_file(file);
  ASSERT_TRUE(reread);
  EXPECT_TRUE(MachineInfo::from_json(nlohmann::json::parse(*reread)));

  int binaries = 0;  // the probe was compiled once and reused
  for (const auto& entry : fs::directory_iterator(file.parent_path()))
    binaries += entry.path().filename().string().rfind("probe-", 0) == 0;
  EXPECT_EQ(binaries, 1);
}

// Probes are serialized per cache: a process that finds no figures while another probes waits
// for it and reads what it measured instead of measuring beside it (two probes at once each
// measure the other's load).
TEST(ProbeMachine, AProbeWaitsForTheOneRunningAndReadsItsFigures) {
  if (describe_machine().cxx_version.empty()) GTEST_SKIP() << "g++ is not installed";
  ScopedCacheDir cache;
  const MachineInfo facts = describe_machine();
  const fs::path file = machine_cache_file(facts.fingerprint);
  fs::create_directories(file.parent_path());
  // This test plays the running probe: it holds the lock, then writes figures no measurement
  // gives.
  const int fd = ::open((file.parent_path() / "probe.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);
  std::optional<Expected<MachineInfo>> waited;
  std::thread waiter([&] { waited = probe_machine({.seconds = 0.3}); });
  MachineInfo written = facts;
  written.peak_gflops_1t = 1234.5;
  written.peak_gflops_all = 2469;
  written.dram_gbps_1t = written.dram_gbps_all = written.cache_gbps_1t = 77;
  written.probed_at = "2026-01-01T00:00:00Z";
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the waiter reaches the lock
  ASSERT_TRUE(write_file_atomic(file, dump_json(written.to_json(), 2)));
  ::close(fd);
  waiter.join();
  ASSERT_TRUE(waited && *waited) << waited->error().message();
  EXPECT_EQ((*waited)->peak_gflops_1t, 1234.5);
  EXPECT_EQ((*waited)->probed_at, "2026-01-01T00:00:00Z");
}

}  // namespace
}  // namespace kf
