// The built-in profiler role (agents/builtin/profiler_role.cpp): the evidence the planner gets.
#include <gtest/gtest.h>

#include "agents/builtin/brain.h"
#include "harness/evaluator.h"
#include "support/fs.h"
#include "support/test_env.h"

namespace kf::agents {
namespace {

struct Judged {
  CompiledTask task;
  CandidateMsg candidate;
  RunResult result;
  MachineInfo machine;
};

// The adversarial corpus's small GEMM, written by hand and judged (timed when `time`).
Judged judged_gemm(bool time) {
  Judged j;
  auto t = compile_task(testing::source_dir() / "tests/adversarial/task");
  KF_CHECK(t.has_value()) << t.error().message();
  j.task = std::move(*t);
  auto src = read_file(testing::source_dir() / "tests/adversarial/cases/ok_naive.cpp");
  KF_CHECK(src.has_value()) << src.error().message();
  j.candidate.source = *src;
  j.candidate.key = "naive";
  j.candidate.kind = SourceKind::written;
  auto m = probe_machine({});
  KF_CHECK(m.has_value()) << m.error().message();
  j.machine = *m;
  EvalOptions o;
  o.time = time;
  o.seed = 3;
  o.min_time_s = 0.05;
  o.min_samples = 3;
  o.machine = machine_limits(j.machine, 1);
  auto r = evaluate(j.task.task, j.candidate.source, o);
  KF_CHECK(r.has_value()) << r.error().message();
  j.result = *r;
  return j;
}

ProfileInput input_of(const Judged& j) {
  return {.task = &j.task,
          .candidate = &j.candidate,
          .result = &j.result,
          .machine = &j.machine,
          .target = nullptr,
          .cxx = "g++",
          .stage_times = "auto",
          .stage_time_s = 0.2};
}

// A candidate that was never timed has nothing to profile: the result's evidence alone.
TEST(BuiltinProfiler, AnUntimedCandidateGetsTheResultsEvidenceOnly) {
  const Judged j = judged_gemm(false);
  ASSERT_EQ(j.result.verdict, Verdict::ok) << j.result.message;
  const Evidence e = builtin::BuiltinProfiler().profile(input_of(j));
  EXPECT_TRUE(e.findings.empty());
  EXPECT_EQ(e.bound, "");
}

// A timed candidate gets the roofline from its result and the findings of the tools, every one of
// which ran.
TEST(BuiltinProfiler, ATimedCandidateGetsTheToolsFindings) {
  const Judged j = judged_gemm(true);
  ASSERT_EQ(j.result.verdict, Verdict::ok) << j.result.message;
  const Evidence e = builtin::BuiltinProfiler().profile(input_of(j));
  EXPECT_FALSE(e.bound.empty());
  EXPECT_GT(e.fraction, 0);
  ASSERT_FALSE(e.findings.empty());
  for (const std::string& f : e.findings)
    EXPECT_EQ(f.find("profile unavailable"), std::string::npos) << f;
  EXPECT_TRUE(e.stage_shares.empty()) << "a written candidate has no stages to time";
}

}  // namespace
}  // namespace kf::agents
