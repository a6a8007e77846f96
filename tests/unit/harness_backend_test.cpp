// The backend seam (harness/backend.h): the judge reaches the candidate's hardware only through
// the backend it is given, and runs host code (the oracle, the reference) on the CPU backend.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/backend.h"
#include "harness/evaluator.h"
#include "support/fs.h"
#include "support/test_env.h"

namespace kf {
namespace {

// A backend that records what it is asked to do and hands the work to the CPU's operations.
struct Calls {
  std::vector<std::string> compiled;  // the sources compiled
  int workers = 0;
};
Calls calls;

CompiledObject recording_compile(const std::string& source, const EntryShim& shim,
                                 const CompileOptions& options) {
  calls.compiled.push_back(source);
  return cpu_backend().compile(source, shim, options);
}

Expected<std::unique_ptr<Worker>> recording_worker(const WorkerSpec& spec) {
  ++calls.workers;
  return cpu_backend().start_worker(spec);
}

Backend recording_backend() {
  Backend b = cpu_backend();
  b.name = "recording";
  b.compile = recording_compile;
  b.start_worker = recording_worker;
  return b;
}

TEST(Backend, TheCpuIsTheFirstBackendAndAnUnknownNameIsRefused) {
  ASSERT_FALSE(backends().empty());
  EXPECT_EQ(backends().front(), &cpu_backend());
  EXPECT_EQ(backend_names().front(), "cpu");
  auto none = backend_named("tpu");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("unknown backend 'tpu': kforge has cpu"), std::string::npos)
      << none.error().message();
}

TEST(Backend, TheJudgeCompilesAndRunsTheCandidateThroughItsBackendAndHostCodeOnTheCpu) {
  auto task = load_task(testing::source_dir() / "tests/adversarial/task");
  ASSERT_TRUE(task) << task.error().message();
  auto source = read_file(testing::source_dir() / "tests/adversarial/cases/ok_naive.cpp");
  ASSERT_TRUE(source) << source.error().message();
  const Backend recording = recording_backend();
  calls = {};
  EvalOptions o;
  o.backend = &recording;
  o.seed = 5;
  o.min_time_s = 0.05;
  o.min_samples = 3;
  o.machine = testing::machine_limits(1);
  auto r = evaluate(*task, *source, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->verdict, Verdict::ok) << r->message;
  // The candidate only: the reference, compiled as the oracle and as the timed reference, is
  // host code.
  EXPECT_EQ(calls.compiled, std::vector<std::string>{*source});
  // One worker per test shape and one for timing at the bench shape.
  EXPECT_EQ(calls.workers, static_cast<int>(task->tests.size()) + 1);
}

}  // namespace
}  // namespace kf
