// The expert transcripts of bench/llm-transcripts (written by make_transcripts.py, served by
// scripts/llm-expert-check.sh): each loads with the replay server's transcript reader, its
// planner replies keep the planner's contract (a free-text plan, then stop), its implementer
// reply holds one C++ block that passes static screening, and that kernel is judged correct
// (untimed) at every test shape of its task, odd ones included.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "agents/llm/reply.h"
#include "agents/llm/screen.h"
#include "harness/evaluator.h"
#include "llm/transcript.h"
#include "support/fs.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using namespace kf::agents::llm_brain;

const fs::path kRoot = fs::path(KFORGE_TEST_SOURCE_DIR);

class ExpertTranscript : public ::testing::TestWithParam<std::string> {};

TEST_P(ExpertTranscript, LoadsKeepsTheContractAndItsKernelIsCorrect) {
  const std::string name = GetParam();
  auto t = llm::read_transcript(kRoot / "bench/llm-transcripts" / (name + ".json"));
  ASSERT_TRUE(t.has_value()) << t.error().message();
  auto task = load_task(kRoot / "bench/jaxbench" / name);
  ASSERT_TRUE(task.has_value()) << task.error().message();

  ASSERT_EQ(t->exchanges.size(), 3u);
  std::vector<std::string> roles;
  for (const auto& e : t->exchanges) roles.push_back(e.role);
  EXPECT_EQ(roles, (std::vector<std::string>{"planner", "implementer", "planner"}));

  auto first = parse_plan_sections(t->exchanges[0].content);
  ASSERT_TRUE(first.has_value()) << first.error().message();
  const agents::Plan plan = plan_from_sections(*first);
  EXPECT_EQ(plan.strategy, "") << "a free-text plan for a model implementer";
  EXPECT_FALSE(plan.text.empty());
  EXPECT_GT(plan.expected_speedup, 1.0);
  auto last = parse_plan_sections(t->exchanges[2].content);
  ASSERT_TRUE(last.has_value()) << last.error().message();
  EXPECT_EQ(plan_from_sections(*last).strategy, "stop");

  auto code = single_cpp_block(t->exchanges[1].content);
  ASSERT_TRUE(code.has_value()) << code.error().message();
  // The transcript holds the kernel file as it is (make_transcripts.py was run after editing).
  EXPECT_EQ(*code, read_file(kRoot / "bench/llm-transcripts/kernels" / (name + ".cpp")).value());
  const Status screened = screen_candidate(*code, *task);
  EXPECT_TRUE(screened.ok()) << screened.message();

  EvalOptions opts;
  opts.time = false;
  opts.threads = 2;
  auto r = evaluate(*task, *code, opts);
  ASSERT_TRUE(r.has_value()) << r.error().message();
  std::string said = r->message;
  for (const auto& d : r->diagnostics) said += "\n" + d;
  EXPECT_EQ(r->verdict, Verdict::ok) << said;
  EXPECT_GE(r->checks.size(), task->tests.size());
  for (const CheckRecord& c : r->checks) EXPECT_TRUE(c.passed) << c.shape << ": " << c.detail;
}

INSTANTIATE_TEST_SUITE_P(HardTasks, ExpertTranscript,
                         ::testing::Values("01_flash_attention", "10_sparse_moe",
                                           "18_conv2d_relu_biasadd"));

}  // namespace
}  // namespace kf
