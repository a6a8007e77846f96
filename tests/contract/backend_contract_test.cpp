// The Backend contract (harness/backend.h): every backend in backends() runs this same suite, the
// moment it is listed. A backend this machine cannot run (supports() says why) is skipped with
// that reason, never passed.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "harness/backend.h"
#include "harness/compiler_jail.h"
#include "harness/evaluator.h"
#include "lower/lower.h"
#include "support/fs.h"
#include "support/test_env.h"
#include "te/compile.h"

namespace kf {
namespace {

// The adversarial corpus's small GEMM and some of its cases: plain C++ every backend's compiler
// and worker must take (the corpus itself is the judge's test: tests/adversarial/).
Task corpus_task() {
  auto t = load_task(testing::source_dir() / "tests/adversarial/task");
  KF_CHECK(t.has_value()) << t.error().message();
  return *t;
}

std::string corpus_case(const std::string& file) {
  auto s = read_file(testing::source_dir() / "tests/adversarial/cases" / file);
  KF_CHECK(s.has_value()) << s.error().message();
  return *s;
}

class BackendContract : public ::testing::TestWithParam<const Backend*> {
 protected:
  void SetUp() override {
    auto m = b().probe({});
    ASSERT_TRUE(m) << b().name << ": the probe failed: " << m.error().message();
    machine_ = *m;
    const Status ok = b().supports(machine_);
    if (!ok.ok()) GTEST_SKIP() << b().name << " is not usable here: " << ok.message();
    auto t = b().target("", machine_);
    ASSERT_TRUE(t) << t.error().message();
    target_ = *t;
  }
  const Backend& b() const { return *GetParam(); }

  EvalOptions options() const {
    EvalOptions o;
    o.backend = &b();
    o.seed = 11;
    o.min_time_s = 0.05;
    o.min_samples = 3;
    o.run_timeout_s = 10;
    o.compile.extra_flags = target_.compile_flags;
    o.machine = testing::machine_limits(1);
    return o;
  }

  MachineInfo machine_;
  Target target_;
};

TEST_P(BackendContract, IsNamedOnceAndFoundByItsName) {
  EXPECT_FALSE(b().name.empty());
  EXPECT_FALSE(b().description.empty());
  std::set<std::string_view> names;
  for (const Backend* other : backends()) EXPECT_TRUE(names.insert(other->name).second);
  auto found = backend_named(b().name);
  ASSERT_TRUE(found) << found.error().message();
  EXPECT_EQ(*found, &b());
  EXPECT_EQ(&backend_of(target_), &b());
}

// Each target the backend lists is either granted (and belongs to the backend) or refused with a
// reason; an unknown name is refused naming it.
TEST_P(BackendContract, TargetsAreGrantedOrRefusedWithAReason) {
  ASSERT_FALSE(b().target_names().empty());
  EXPECT_EQ(target_.backend, b().name);
  int granted = 0;
  for (const std::string& name : b().target_names()) {
    auto t = b().target(name, machine_);
    if (t) {
      ++granted;
      EXPECT_EQ(t->name, name);
      EXPECT_EQ(t->backend, b().name);
    } else {
      EXPECT_NE(t.error().message().find(name), std::string::npos) << t.error().message();
    }
  }
  EXPECT_GT(granted, 0);
  auto unknown = b().target("no-such-target", machine_);
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("no-such-target"), std::string::npos);
}

TEST_P(BackendContract, CompilesACorrectSolutionAndDiagnosesABrokenOne) {
  const Task task = corpus_task();
  CompileOptions co;
  co.extra_flags = target_.compile_flags;
  const CompiledObject ok =
      b().compile(corpus_case("ok_naive.cpp"), entry_shim(task, ShimKind::candidate), co);
  ASSERT_TRUE(ok.info.ok) << ok.info.log;
  EXPECT_TRUE(fs::exists(ok.so_path));
  const CompiledObject bad =
      b().compile(corpus_case("not_cpp.cpp"), entry_shim(task, ShimKind::candidate), co);
  EXPECT_FALSE(bad.info.ok);
  EXPECT_FALSE(bad.info.diagnostics.empty()) << bad.info.log;
}

// A worker started by the backend runs the compiled kernel on buffers the judge owns.
TEST_P(BackendContract, StartsAWorkerThatRunsTheObject) {
  const Task task = corpus_task();
  const CompiledObject obj =
      b().compile(corpus_case("ok_naive.cpp"), entry_shim(task, ShimKind::candidate), {});
  ASSERT_TRUE(obj.info.ok) << obj.info.log;
  auto inst = task.instantiate(task.tests.back());
  ASSERT_TRUE(inst) << inst.error().message();
  WorkerSpec spec{.so = obj.so_path, .dims = inst->dims, .scalars = inst->scalars};
  for (size_t t = 0; t < task.tensor_count(); ++t)
    spec.layout.push_back({task.tensor(t).name,
                           inst->elements[t] * dtype_size(task.tensor(t).dtype),
                           t < task.inputs.size()});
  auto w = b().start_worker(spec);
  ASSERT_TRUE(w) << w.error().message();
  ASSERT_EQ((*w)->fault(), nullptr) << (*w)->fault()->message;
  const RunOutcome r = (*w)->run(0, 2, 10);
  EXPECT_TRUE(r.ok) << r.message;
}

// Judged through the backend, each solution gets the verdict it deserves.
TEST_P(BackendContract, TheJudgeGivesEachSolutionItsVerdict) {
  const Task task = corpus_task();
  const std::vector<std::pair<std::string, Verdict>> cases = {
      {"ok_naive.cpp", Verdict::ok},
      {"partial_output.cpp", Verdict::wrong_answer},
      {"segfault.cpp", Verdict::crash},
      {"missing_function.cpp", Verdict::compile_error},
  };
  for (const auto& [file, verdict] : cases) {
    auto r = evaluate(task, corpus_case(file), options());
    ASSERT_TRUE(r) << file << ": " << r.error().message();
    EXPECT_EQ(r->verdict, verdict) << file << ": " << r->message;
  }
}

// The backend's own kernels: generated for its widest target from a TE spec, they pass the judge.
TEST_P(BackendContract, AGeneratedKernelForItsWidestTargetPassesTheJudge) {
  auto task = load_task(testing::source_dir() / "bench/jaxbench/12_rmsnorm");
  ASSERT_TRUE(task) << task.error().message();
  auto source = generate_kernel(*task, {}, {.target = target_.codegen});
  ASSERT_TRUE(source) << source.error().message();
  EvalOptions o = options();
  o.time = false;
  auto r = evaluate(*task, *source, o);
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->verdict, Verdict::ok) << r->message;
}

TEST_P(BackendContract, ItsProfileToolsAreInstalled) {
  const ProfileTools tools = b().profile_tools("g++");
  if (tools.disassembler.empty()) return;  // a backend may have none
  EXPECT_TRUE(fs::path(resolve_program(tools.disassembler)).is_absolute())
      << tools.disassembler << " is not on PATH";
}

std::string backend_name(const ::testing::TestParamInfo<const Backend*>& info) {
  return std::string(info.param->name);
}

INSTANTIATE_TEST_SUITE_P(Every, BackendContract, ::testing::ValuesIn(backends()), backend_name);

}  // namespace
}  // namespace kf
