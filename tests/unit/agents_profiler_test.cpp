#include <gtest/gtest.h>

#include <algorithm>

#include "agents/profiler.h"
#include "support/test_env.h"

namespace kf::agents {
namespace {

Task rmsnorm_task() {
  auto t = load_task(testing::source_dir() / "bench/jaxbench/12_rmsnorm");
  KF_CHECK(t.has_value()) << t.error().message();
  return *t;
}

// This machine kind (MACHINE.md), fixed so the test does not depend on the probe.
MachineInfo zen5() {
  MachineInfo m;
  m.isa = {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw"};
  m.cores = 2;
  m.l1d_bytes = 48 << 10;
  m.l2_bytes = 1 << 20;
  m.l3_bytes = 32 << 20;
  m.peak_gflops_1t = 215;
  m.peak_gflops_all = 420;
  m.dram_gbps_1t = 36;
  m.dram_gbps_all = 70;
  m.cache_gbps_1t = 150;
  return m;
}

// A judged result with a memory-bound roofline at `fraction` of 35 GB/s, on `busy` CPUs.
RunResult measured(double fraction, double busy, int threads) {
  RunResult r;
  r.threads = threads;
  Roofline rf;
  rf.bytes = 4.0 * (2.0 * 16384 * 4096 + 4096);
  rf.flops = 4.0 * 16384 * 4096 + 4 * 16384;
  rf.peak_gbps = 35;
  rf.peak_gflops = 420;
  rf.gbps = fraction * rf.peak_gbps;
  rf.gflops = rf.gbps * rf.flops / rf.bytes;
  rf.attainable_gflops = rf.peak_gbps * rf.flops / rf.bytes;
  rf.fraction = fraction;
  rf.bound = "memory";
  r.roofline = rf;
  r.counters = Counters{.cpus_busy = busy, .cpu_s_per_call = 0.05};
  return r;
}

bool has_finding(const Profile& p, const std::string& text) {
  return std::any_of(p.findings.begin(), p.findings.end(),
                     [&](const std::string& f) { return f.find(text) != std::string::npos; });
}

std::string all_findings(const Profile& p) {
  std::string s;
  for (const auto& f : p.findings) s += f + "\n";
  return s;
}

ProfileOptions no_tools() {
  ProfileOptions o;
  o.compiler_report = false;
  o.disassembly = false;
  return o;
}

TEST(Profiler, MemoryBoundSerialResultGivesTagsAndNumbers) {
  const Task task = rmsnorm_task();
  auto p =
      profile_candidate(task, task.reference_source, measured(0.3, 1.0, 2), zen5(), no_tools());
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_TRUE(p->tags.memory_bound);
  EXPECT_FALSE(p->tags.compute_bound);
  EXPECT_TRUE(p->tags.serial_when_parallel_requested);
  EXPECT_FALSE(p->tags.faults_in_hot_path);
  EXPECT_NEAR(p->roofline.headroom, 1 / 0.3, 1e-9);
  EXPECT_NEAR(p->roofline.intensity, 4.0 * 16384 * 4096 / (8.0 * 16384 * 4096), 0.01);
  ASSERT_GE(p->findings.size(), 3u) << all_findings(*p);
  // Most important first: the roofline, then the threads.
  EXPECT_EQ(p->findings[0].rfind("memory-bound at 30% of DRAM bandwidth (10.5 of 35 GB/s", 0), 0u)
      << all_findings(*p);
  EXPECT_NE(p->findings[0].find("up to 3.33x headroom"), std::string::npos) << p->findings[0];
  EXPECT_EQ(p->findings[1], "threads: 1 of 2 CPUs busy: the kernel runs serially");
  EXPECT_TRUE(has_finding(*p,
                          "working set 512 MiB: DRAM-resident; each pass over it costs >= "
                          "7.67 ms at 70 GB/s"))
      << all_findings(*p);
  // Skipped stages say nothing.
  EXPECT_FALSE(has_finding(*p, "unavailable"));
}

TEST(Profiler, ParallelResultIsNotSerialAndFaultsAreFlagged) {
  const Task task = rmsnorm_task();
  RunResult r = measured(0.9, 1.95, 2);
  r.counters->minor_faults_per_call = 32768;
  r.counters->context_switches_per_call = 2;
  auto p = profile_candidate(task, task.reference_source, r, zen5(), no_tools());
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->tags.serial_when_parallel_requested);
  EXPECT_TRUE(p->tags.faults_in_hot_path);
  EXPECT_NE(p->findings[0].find("near the memory roofline"), std::string::npos) << p->findings[0];
  EXPECT_TRUE(has_finding(*p, "32768 page faults per call"));
  EXPECT_TRUE(has_finding(*p, "~128 MiB newly mapped per call")) << all_findings(*p);
  EXPECT_TRUE(has_finding(*p, "2 context switches per call"));
  EXPECT_FALSE(has_finding(*p, "threads:"));

  // Less than one CPU busy: waiting or a shared machine, not evidence of a serial kernel.
  p = profile_candidate(task, task.reference_source, measured(0.3, 0.6, 2), zen5(), no_tools());
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->tags.serial_when_parallel_requested);
  EXPECT_TRUE(has_finding(*p, "threads: 0.6 of 2 CPUs busy, less than one")) << all_findings(*p);
}

TEST(Profiler, WorkingSetLevels) {
  Task task = rmsnorm_task();
  const MachineInfo m = zen5();
  auto level = [&](double n, double d, int threads, const MachineInfo& machine) {
    task.bench = {{"N", n}, {"D", d}};
    Profile p;
    Status st = analyze_profile(task, RunResult{}, machine, threads, p);
    KF_CHECK(st.ok()) << st.message();
    return p;
  };
  Profile l1 = level(4, 256, 1, m);  // 4 * (2 * 1024 + 256) = 9 KiB
  EXPECT_EQ(l1.working_set.bytes, 9216);
  EXPECT_EQ(l1.working_set.level, "L1");
  EXPECT_TRUE(l1.tags.fits_l1 && l1.tags.fits_l2 && l1.tags.fits_l3);
  // 68 KiB: beyond one core's L1, within the L1s of the two cores two threads run on.
  EXPECT_EQ(level(8, 1024, 1, m).working_set.level, "L2");
  Profile two = level(8, 1024, 2, m);
  EXPECT_EQ(two.working_set.level, "L1");
  EXPECT_EQ(two.working_set.bytes_per_thread, 34 * 1024);
  // 1.5 MiB: L2 on two cores, L3 on one.
  EXPECT_EQ(level(192, 1024, 1, m).working_set.level, "L3");
  EXPECT_EQ(level(192, 1024, 2, m).working_set.level, "L2");
  Profile dram = level(16384, 4096, 2, m);
  EXPECT_EQ(dram.working_set.level, "DRAM");
  EXPECT_FALSE(dram.tags.fits_l3);
  EXPECT_NEAR(dram.working_set.dram_pass_s, dram.working_set.bytes / 70e9, 1e-12);
  MachineInfo unknown;  // no cache sizes
  EXPECT_EQ(level(4, 256, 1, unknown).working_set.level, "unknown");
}

// A loop-carried dependence (y[d] needs y[d - 1]) on line 9; the loop above it vectorizes.
const char* kRecurrence = R"(#include <kforge/kernel.h>
#include <cmath>
void rmsnorm(const float* x, const float* w, float* y, int64_t N, int64_t D, float eps) {
  for (int64_t n = 0; n < N; ++n) {
    float ss = 0;
    for (int64_t d = 0; d < D; ++d) ss += x[n * D + d] * x[n * D + d];
    const float r = 1.0f / std::sqrt(ss / float(D) + eps);
    y[n * D] = x[n * D] * r * w[0];
    for (int64_t d = 1; d < D; ++d)
      y[n * D + d] = y[n * D + d - 1] * 0.0f + x[n * D + d] * r * w[d];
  }
}
)";

TEST(Profiler, MissedVectorizationNamesTheLine) {
  const Task task = rmsnorm_task();
  auto p = profile_candidate(task, kRecurrence, measured(0.1, 1.0, 1), zen5());
  ASSERT_TRUE(p.has_value()) << p.error().message();
  const VectorizationReport& v = p->vectorization;
  ASSERT_TRUE(v.available) << v.unavailable;
  EXPECT_EQ(v.hot_loops, 2);
  EXPECT_EQ(v.vectorized, 1);
  EXPECT_EQ(v.missed, 1);
  ASSERT_EQ(v.missed_loops.size(), 1u);
  EXPECT_EQ(v.missed_loops[0].line, 9);
  EXPECT_EQ(v.missed_loops[0].source, "for (int64_t d = 1; d < D; ++d)");
  EXPECT_TRUE(p->tags.not_vectorized);
  EXPECT_TRUE(has_finding(*p,
                          "1 of 2 hot loops not vectorized: line 9 `for (int64_t d = 1; d < "
                          "D; ++d)`: not vectorized"))
      << all_findings(*p);
  // The instruction mix: the recurrence's loop runs a scalar FMA per element.
  const InstructionMix& m = p->instructions;
  ASSERT_TRUE(m.available) << m.unavailable;
  EXPECT_GT(m.innermost_loops, 0);
  EXPECT_GT(m.loops.fma_scalar, 0);
  EXPECT_EQ(m.all.fma_zmm, 0);
  EXPECT_TRUE(p->tags.scalar_fma_heavy);
  EXPECT_TRUE(has_finding(*p, "no 512-bit FMAs: 0 of")) << all_findings(*p);
}

// Explicit AVX-512 code with GCC vector extensions: 16 floats per FMA.
const char* kVector = R"(#include <kforge/kernel.h>
#include <cmath>
typedef float v16 __attribute__((vector_size(64)));
void rmsnorm(const float* x, const float* w, float* y, int64_t N, int64_t D, float eps) {
  for (int64_t n = 0; n < N; ++n) {
    const float* xr = x + n * D;
    float* yr = y + n * D;
    v16 acc = {};
    int64_t d = 0;
    for (; d + 16 <= D; d += 16) {
      v16 a;
      __builtin_memcpy(&a, xr + d, sizeof a);
      acc = a * a + acc;
    }
    float ss = 0;
    for (int i = 0; i < 16; ++i) ss += acc[i];
    for (; d < D; ++d) ss += xr[d] * xr[d];
    const float r = 1.0f / std::sqrt(ss / float(D) + eps);
    for (int64_t e = 0; e < D; ++e) yr[e] = xr[e] * r * w[e];
  }
}
)";

TEST(Profiler, ExplicitVectorCodeCountsZmmFmas) {
  const Task task = rmsnorm_task();
  auto p = profile_candidate(task, kVector, measured(0.5, 1.0, 1), zen5());
  ASSERT_TRUE(p.has_value()) << p.error().message();
  const InstructionMix& m = p->instructions;
  ASSERT_TRUE(m.available) << m.unavailable;
  EXPECT_GT(m.loops.fma_zmm, 0);
  EXPECT_GT(m.loops.zmm_fma_share(), 0.0);
  EXPECT_FALSE(p->tags.scalar_fma_heavy) << all_findings(*p);
  EXPECT_FALSE(has_finding(*p, "no 512-bit FMAs")) << all_findings(*p);
  ASSERT_TRUE(p->vectorization.available) << p->vectorization.unavailable;
  // The v16 loop is not "missed": it is vector code already.
  for (const MissedLoop& l : p->vectorization.missed_loops) EXPECT_NE(l.line, 10) << l.reason;
  EXPECT_GE(p->vectorization.explicit_simd + p->vectorization.vectorized, 2);
}

TEST(Profiler, ReferenceKernelVectorizesItsLoops) {
  const Task task = rmsnorm_task();
  auto p = profile_candidate(task, task.reference_source, measured(0.2, 1.0, 1), zen5());
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_EQ(p->vectorization.missed, 0) << all_findings(*p);
  EXPECT_EQ(p->vectorization.hot_loops, 2);
  // GCC's -march=native tuning picks the width: 64 bytes on Zen 5, 32 on Intel cores whose
  // tuning prefers 256-bit vectors (-mprefer-vector-width=256); either is vector code.
  const int widest = p->vectorization.widest_bytes;
  EXPECT_TRUE(widest == 32 || widest == 64) << widest;
  EXPECT_TRUE(has_finding(
      *p, "all 2 hot loops vectorized; widest vectors " + std::to_string(widest) + " bytes"))
      << all_findings(*p);
  // The template is inlined into the entry shim: kf_entry is what gets counted.
  EXPECT_TRUE(p->instructions.inlined_into_entry);
  EXPECT_GT(p->instructions.all.total, 0);
  // GCC keeps the float sum of squares in order: one vaddss per element inside the loop.
  EXPECT_TRUE(p->tags.scalar_in_loops) << all_findings(*p);
  EXPECT_TRUE(has_finding(*p, "an in-order reduction")) << all_findings(*p);
}

TEST(Profiler, ToolFailuresBecomeFindings) {
  const Task task = rmsnorm_task();
  ProfileOptions o;
  o.cxx = "kforge-no-such-compiler";
  auto p = profile_candidate(task, task.reference_source, measured(0.3, 1.0, 1), zen5(), o);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  EXPECT_FALSE(p->vectorization.available);
  EXPECT_TRUE(has_finding(*p, "vectorization report unavailable: ")) << all_findings(*p);
  EXPECT_TRUE(has_finding(*p, "instruction mix unavailable: ")) << all_findings(*p);

  o = ProfileOptions{};
  o.objdump = "kforge-no-such-objdump";
  p = profile_candidate(task, task.reference_source, measured(0.3, 1.0, 1), zen5(), o);
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(p->vectorization.available);
  EXPECT_TRUE(has_finding(*p, "instruction mix unavailable: kforge-no-such-objdump: not found"))
      << all_findings(*p);

  // A candidate that does not compile: the compiler's first error is the reason.
  p = profile_candidate(task, "int x = ;\n", measured(0.3, 1.0, 1), zen5());
  ASSERT_TRUE(p.has_value());
  EXPECT_TRUE(has_finding(*p,
                          "vectorization report unavailable: g++ failed (exit code 1): "
                          "candidate.cpp:1:9: expected primary-expression"))
      << all_findings(*p);
}

TEST(Profiler, InvalidInputsFail) {
  Task task = rmsnorm_task();
  EXPECT_FALSE(profile_candidate(task, "  \n", RunResult{}, zen5(), no_tools()).has_value());
  ProfileOptions o = no_tools();
  o.threads = -1;
  EXPECT_FALSE(profile_candidate(task, task.reference_source, RunResult{}, zen5(), o).has_value());
  task.bench = {{"N", 4}};  // D missing
  auto p = profile_candidate(task, task.reference_source, RunResult{}, zen5(), no_tools());
  ASSERT_FALSE(p.has_value());
  EXPECT_NE(p.error().message().find("bench shape"), std::string::npos) << p.error().message();
}

TEST(Profiler, UnmeasuredResultSaysSo) {
  const Task task = rmsnorm_task();
  RunResult r;
  r.verdict = Verdict::wrong_answer;
  auto p = profile_candidate(task, task.reference_source, r, zen5(), no_tools());
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->roofline.known);
  EXPECT_FALSE(p->tags.memory_bound || p->tags.compute_bound);
  EXPECT_EQ(p->findings[0].rfind("verdict wrong_answer", 0), 0u) << all_findings(*p);
  EXPECT_TRUE(has_finding(*p, "no roofline position"));
}

// Stage 8 runs the instrumented build of the candidate's schedule; RMSNorm at its largest test
// shape keeps that to milliseconds.
TEST(Profiler, TimePerStageComesFromTheInstrumentedBuildOfTheSchedule) {
  Task task = rmsnorm_task();
  task.bench = task.tests.back();
  RunResult r = measured(0.3, 1.0, 1);
  r.timing = Timing{.samples = 5, .min_s = 1e-4, .median_s = 1e-4};
  ProfileOptions o = no_tools();
  o.schedule = "vectorize y.d 16\n";
  o.stage_time_s = 0.01;
  auto p = profile_candidate(task, task.reference_source, r, zen5(), o);
  ASSERT_TRUE(p.has_value()) << p.error().message();
  ASSERT_TRUE(p->stage_times.known) << p->stage_times.unavailable;
  EXPECT_EQ(p->stage_times.calls, 20);  // 0.01 s at 0.1 ms per call, at most 20
  ASSERT_EQ(p->stage_times.stages.size(), 3u);
  EXPECT_EQ(p->stage_times.stages[0].stage, "ms_r");
  EXPECT_EQ(p->stage_times.stages[2].stage, "y");
  double shares = 0;
  for (const StageTime& t : p->stage_times.stages) shares += t.share;
  EXPECT_NEAR(shares, 1.0, 1e-9);
  EXPECT_TRUE(has_finding(*p, "time per stage (instrumented build, 20 calls): "))
      << all_findings(*p);

  // Hand-written code has no schedule: nothing attempted, nothing said.
  o.schedule.reset();
  p = profile_candidate(task, task.reference_source, r, zen5(), o);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->stage_times.known);
  EXPECT_FALSE(has_finding(*p, "time per stage")) << all_findings(*p);

  // A schedule that does not apply is a finding, not a failed profile.
  o.schedule = "vectorize nosuchstage.d 16\n";
  p = profile_candidate(task, task.reference_source, r, zen5(), o);
  ASSERT_TRUE(p.has_value());
  EXPECT_FALSE(p->stage_times.known);
  EXPECT_TRUE(has_finding(*p, "time per stage unavailable: ")) << all_findings(*p);
}

}  // namespace
}  // namespace kf::agents
