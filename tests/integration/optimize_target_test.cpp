// The code target (harness/target.h) through the optimize loop: forced to AVX2 on a machine with
// AVX-512, every kernel the built-in brain generates is generated for AVX2 and judged compiled
// with -mno-avx512f (no AVX-512 instruction, from the generated code or the compiler's own
// vectorization); compiled that way again here, its object holds no AVX-512 register and the
// vectorized ones use AVX2's; and the best passes the judge's final run.
// Three tasks of different shapes: a row reduction (f64), a row softmax (bf16 in, f32 math) and a
// GEMV.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "harness/machine.h"
#include "harness/target.h"
#include "modes/optimize.h"
#include "store/memory_store.h"
#include "support/fs.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

TEST(Target, TheWidestTheMachineRunsAndNothingWider) {
  MachineInfo m;
  m.isa = {"sse4_2", "avx", "avx2", "fma"};
  EXPECT_EQ(target_for(m).name, "avx2");
  EXPECT_EQ(target_for(m).vector_registers, 16);
  auto wide = target_named("avx512", m);
  ASSERT_FALSE(wide);
  EXPECT_NE(wide.error().message().find("lacks"), std::string::npos) << wide.error().message();
  ASSERT_TRUE(target_named("scalar", m));
  ASSERT_TRUE(target_named("native", m));
  EXPECT_EQ(target_named("native", m)->name, "avx2");
  EXPECT_FALSE(target_named("neon", m));
  m.isa.push_back("avx512f");
  EXPECT_EQ(target_for(m).name, "avx512");
  EXPECT_EQ(target_named("avx2", m)->compile_flags, std::vector<std::string>{"-mno-avx512f"});
  m.isa = {"sse4_2"};
  EXPECT_EQ(target_for(m).name, "scalar");
}

class ForcedAvx2 : public ::testing::TestWithParam<std::string> {};

TEST_P(ForcedAvx2, KernelsAreAvx2OnlyAndTheBestPassesTheFinalRun) {
  const MachineInfo machine = describe_machine("g++");
  if (!target_named("avx2", machine)) GTEST_SKIP() << "this machine has no AVX2";
  TempDir out("kforge-target-avx2");
  OptimizeOptions o;
  o.task_dir = testing::source_dir() / GetParam();
  o.target = "avx2";
  o.budget_evals = 4;
  o.tune_budget = 1;
  o.min_time_s = 0.05;
  o.profile = false;
  o.final_run = true;
  o.final_min_time_s = 0.05;
  o.stop_fraction = 100;  // the budget decides
  o.out_dir = out.path() / "out";
  MemoryStore store;
  auto r = optimize(o, store);
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_TRUE(r->final_result.has_value());
  EXPECT_EQ(r->final_result->verdict, Verdict::ok) << r->final_result->message;

  // Every candidate judged, compiled as the judge does (-march=native) with the target's flag:
  // its object holds no AVX-512 register, and the vectorized ones use AVX2's.
  auto attempts = store.attempts(r->run_id);
  ASSERT_TRUE(attempts);
  std::set<std::string> keys;
  int with_ymm = 0;
  for (const AttemptRecord& a : *attempts) {
    if (a.candidate_key.empty() || !keys.insert(a.candidate_key).second) continue;
    EXPECT_NE(a.verdict, "compile_error") << a.strategy << ": " << a.detail.dump();
    EXPECT_NE(a.verdict, "crash") << a.strategy << ": " << a.detail.dump();
    auto c = store.get_candidate(a.candidate_key);
    ASSERT_TRUE(c && c->has_value());
    EXPECT_NE((*c)->source.find("(target avx2)"), std::string::npos) << a.strategy;
    const fs::path src = out.path() / (a.candidate_key + ".cpp"), obj = out.path() / "k.o";
    ASSERT_TRUE(write_file_atomic(src, (*c)->source).ok());
    auto cc = run_process({.argv = {"g++", "-std=c++20", "-O3", "-march=native", "-mno-avx512f",
                                    "-fopenmp", "-I" + (testing::source_dir() / "runtime").string(),
                                    "-c", src.string(), "-o", obj.string()},
                           .timeout_s = 120});
    ASSERT_TRUE(cc && cc->ok()) << a.strategy << ": " << (cc ? cc->err : cc.error().message());
    auto od = run_process({.argv = {"objdump", "-d", obj.string()}, .max_output = 64 << 20});
    ASSERT_TRUE(od && od->ok());
    EXPECT_EQ(od->out.find("zmm"), std::string::npos) << a.strategy << " uses AVX-512 registers";
    with_ymm += od->out.find("ymm") != std::string::npos;
  }
  EXPECT_GE(keys.size(), 2u);
  EXPECT_GE(with_ymm, 1) << "no candidate used AVX2 vectors";
  auto run = store.get_run(r->run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->options["target"], "avx2");
}

INSTANTIATE_TEST_SUITE_P(Tasks, ForcedAvx2,
                         ::testing::Values("tests/golden/tasks/lse_rows",
                                           "tests/golden/tasks/bf16_softmax",
                                           "tests/check_tasks/gemv_ok"),
                         [](const auto& info) { return fs::path(info.param).filename().string(); });

}  // namespace
}  // namespace kf
