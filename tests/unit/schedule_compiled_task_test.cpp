// The compiled task (schedule/compiled_task.h): loaded once, its parsed spec is what kernel
// generation and the judge use, so nothing downstream parses the spec again.
#include <gtest/gtest.h>

#include "lower_test_util.h"
#include "schedule/compiled_task.h"

namespace kf {
namespace {

constexpr const char* kRmsnorm = "bench/jaxbench/12_rmsnorm";

TEST(CompiledTask, KeepsTheParsedSpecAndACopySharesIt) {
  const CompiledTask t = testing::compiled_at(kRmsnorm);
  ASSERT_TRUE(t.program);
  ASSERT_TRUE(t.base);
  EXPECT_EQ(t.program->output_stage.size(), t.task.outputs.size());
  const CompiledTask copy = t;
  EXPECT_EQ(copy.program.get(), t.program.get());
  EXPECT_EQ(copy.base->task, &copy.task);  // the copy's pipeline reads the copy's task
}

// Kernel generation from the loaded program writes what generation from the spec writes.
TEST(CompiledTask, GenerationFromTheLoadedProgramMatchesGenerationFromTheSpec) {
  const CompiledTask t = testing::compiled_at(kRmsnorm);
  const sched::Schedule s = testing::schedule_of("vectorize y.d 16\n");
  auto from_program = generate_kernel(t.task, *t.program, s, {});
  auto from_spec = generate_kernel(t.task, s, {});
  ASSERT_TRUE(from_program) << from_program.error().message();
  ASSERT_TRUE(from_spec) << from_spec.error().message();
  EXPECT_EQ(*from_program, *from_spec);
}

// The judge's oracle interprets the program it is given: with the spec's text broken after
// loading, a judge given the loaded program still judges, and one without it cannot.
TEST(CompiledTask, TheJudgeUsesTheLoadedProgramInsteadOfParsingAgain) {
  CompiledTask t = testing::compiled_at(kRmsnorm);
  auto source = generate_kernel(t.task, *t.program, {}, {});
  ASSERT_TRUE(source) << source.error().message();
  t.task.te_spec = "this is not a TE spec";
  EvalOptions o;
  o.time = false;
  o.seed = 3;
  o.compile.timeout_s = 300;
  o.program = t.program;
  auto judged = evaluate(t.task, *source, o);
  ASSERT_TRUE(judged) << judged.error().message();
  EXPECT_EQ(judged->verdict, Verdict::ok) << judged->message;

  o.program = nullptr;
  auto reparsed = evaluate(t.task, *source, o);
  ASSERT_FALSE(reparsed);
  EXPECT_NE(reparsed.error().message().find("the task's TE spec"), std::string::npos)
      << reparsed.error().message();
}

}  // namespace
}  // namespace kf
