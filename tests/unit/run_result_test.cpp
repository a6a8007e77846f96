// RunResult's JSON (harness/run_result.h): what the store and the recordings keep must read back
// as the same result, and a malformed result is an error, never a crash.
#include "harness/run_result.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kf {
namespace {

Timing timing(double median) {
  Timing t;
  t.samples = 7;
  t.reps_per_sample = 3;
  t.sets = 2;
  t.min_s = median * 0.9;
  t.median_s = median;
  t.mean_s = median * 1.01;
  t.max_s = median * 1.2;
  t.spread = 0.04;
  t.overhead_s = 1e-7;
  t.per_run_s = {median * 0.9, median, median * 1.2};
  return t;
}

// Every field set to something other than its default.
RunResult full_result() {
  RunResult r;
  r.verdict = Verdict::suspicious;
  r.message = "faster than the roofline allows";
  r.diagnostics = {"first", "second"};
  r.compile.ok = true;
  r.compile.cached = true;
  r.compile.seconds = 1.25;
  r.compile.key = "0123456789abcdef0123456789abcdef";
  r.compile.command = "g++ -O3 -c cand.cpp";
  r.compile.log = "cand.cpp:3:5: warning: unused";
  r.compile.diagnostics = {{"cand.cpp", 3, 5, "warning", "unused variable 'x'"}};
  r.checks = {{.shape = "M=17 N=33 K=7",
               .seed = 42,
               .passed = true,
               .timed = false,
               .rel_l2 = 1e-7,
               .max_abs_err = 2e-6,
               .worst_ratio = 0.75,
               .worst = "C[3, 7]: got 1.5, expected 1.25",
               .detail = ""},
              {.shape = "M=1024 N=1024 K=1024",
               .seed = 43,
               .passed = false,
               .timed = true,
               .rel_l2 = 0.5,
               .max_abs_err = 3,
               .worst_ratio = 3e4,
               .worst = "C[0, 0]",
               .detail = "rel_l2 0.5 > 1e-5"}};
  r.timing = timing(2e-3);
  r.reference_timing = timing(8e-3);
  r.baseline_timing = timing(1e-3);
  Roofline f;
  f.flops = 2e9;
  f.bytes = 1.2e7;
  f.gflops = 1000;
  f.gbps = 6;
  f.peak_gflops = 150;
  f.peak_gbps = 20;
  f.attainable_gflops = 150;
  f.fraction = 6.7;
  f.min_time_s = 1.3e-2;
  f.bound = "compute";
  r.roofline = f;
  r.counters = Counters{.cpus_busy = 1.9,
                        .cpu_s_per_call = 3.8e-3,
                        .minor_faults_per_call = 2,
                        .major_faults_per_call = 0.5,
                        .context_switches_per_call = 0.25};
  r.vs_reference = {4.0, 3.5};
  r.vs_baseline = {0.5, 0.45};
  r.baseline_name = "oneDNN dnnl_sgemm";
  r.task = "08_gemm";
  r.shape = "M=1024 N=1024 K=1024";
  r.machine = "fingerprint";
  r.threads = 2;
  r.output_log = "hello from the kernel\n";
  return r;
}

TEST(RunResultJson, FullResultRoundTrips) {
  const RunResult r = full_result();
  const nlohmann::json j = r.to_json();
  auto back = RunResult::from_json(j);
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->to_json(), j);
  // Spot checks on the typed fields (to_json equality could hide a field both sides drop).
  EXPECT_EQ(back->verdict, Verdict::suspicious);
  EXPECT_EQ(back->diagnostics, r.diagnostics);
  ASSERT_EQ(back->compile.diagnostics.size(), 1u);
  EXPECT_EQ(back->compile.diagnostics[0].line, 3);
  EXPECT_EQ(back->compile.diagnostics[0].column, 5);
  EXPECT_EQ(back->compile.diagnostics[0].severity, "warning");
  ASSERT_EQ(back->checks.size(), 2u);
  EXPECT_EQ(back->checks[1].seed, 43u);
  EXPECT_TRUE(back->checks[1].timed);
  EXPECT_FALSE(back->checks[1].passed);
  EXPECT_EQ(back->checks[1].detail, "rel_l2 0.5 > 1e-5");
  EXPECT_DOUBLE_EQ(back->checks[0].worst_ratio, 0.75);
  // The margin counts passed checks only: the failed one's 3e4 is a verdict, not a margin.
  EXPECT_DOUBLE_EQ(back->worst_error_ratio(), 0.75);
  ASSERT_TRUE(back->timing && back->reference_timing && back->baseline_timing);
  EXPECT_DOUBLE_EQ(back->timing->median_s, 2e-3);
  EXPECT_EQ(back->timing->per_run_s.size(), 3u);
  EXPECT_DOUBLE_EQ(back->reference_timing->median_s, 8e-3);
  EXPECT_EQ(back->baseline_name, "oneDNN dnnl_sgemm");
  ASSERT_TRUE(back->roofline);
  EXPECT_EQ(back->roofline->bound, "compute");
  EXPECT_DOUBLE_EQ(back->roofline->fraction, 6.7);
  ASSERT_TRUE(back->counters);
  EXPECT_DOUBLE_EQ(back->counters->cpus_busy, 1.9);
  EXPECT_DOUBLE_EQ(back->counters->context_switches_per_call, 0.25);
  EXPECT_DOUBLE_EQ(back->vs_reference.median, 4.0);
  EXPECT_DOUBLE_EQ(back->vs_reference.min, 3.5);
  EXPECT_DOUBLE_EQ(back->vs_baseline.min, 0.45);
  EXPECT_EQ(back->threads, 2);
  EXPECT_EQ(back->output_log, r.output_log);
}

TEST(RunResultJson, RoundTripsThroughText) {
  const RunResult r = full_result();
  auto back = RunResult::from_json(nlohmann::json::parse(r.to_json().dump()));
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->to_json(), r.to_json());
}

TEST(RunResultJson, MinimalResultRoundTripsWithoutOptionalParts) {
  RunResult r;
  r.verdict = Verdict::compile_error;
  r.message = "does not compile";
  auto back = RunResult::from_json(r.to_json());
  ASSERT_TRUE(back) << back.error().message();
  EXPECT_EQ(back->verdict, Verdict::compile_error);
  EXPECT_FALSE(back->timing || back->reference_timing || back->baseline_timing);
  EXPECT_FALSE(back->roofline || back->counters);
  EXPECT_EQ(back->vs_reference.median, 0);
  EXPECT_EQ(back->to_json(), r.to_json());
}

TEST(RunResultJson, EveryVerdictRoundTrips) {
  for (Verdict v :
       {Verdict::ok, Verdict::compile_error, Verdict::crash, Verdict::timeout,
        Verdict::wrong_answer, Verdict::memory_limit, Verdict::forbidden, Verdict::suspicious}) {
    RunResult r;
    r.verdict = v;
    auto back = RunResult::from_json(r.to_json());
    ASSERT_TRUE(back) << verdict_name(v);
    EXPECT_EQ(back->verdict, v);
    EXPECT_EQ(parse_verdict(verdict_name(v)), v);
  }
  EXPECT_FALSE(parse_verdict("fast").has_value());
}

TEST(RunResultJson, MalformedResultsAreErrors) {
  auto r = RunResult::from_json(nlohmann::json::array());
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "run result: expected a JSON object");

  r = RunResult::from_json({{"message", "no verdict"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "run result: missing field 'verdict'");

  r = RunResult::from_json({{"verdict", 3}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "run result: missing field 'verdict'");

  r = RunResult::from_json({{"verdict", "fast"}});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "run result: unknown verdict 'fast'");

  // A mistyped field is an error (not an exception escaping to the caller).
  nlohmann::json j = full_result().to_json();
  j["message"] = 5;
  r = RunResult::from_json(j);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message().starts_with("run result: ")) << r.error().message();

  j = full_result().to_json();
  j["timing"]["median_s"] = "fast";
  r = RunResult::from_json(j);
  ASSERT_FALSE(r);
  EXPECT_TRUE(r.error().message().starts_with("run result: ")) << r.error().message();
}

}  // namespace
}  // namespace kf
