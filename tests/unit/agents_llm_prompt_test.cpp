// The LLM roles' prompt templates (agents/llm/prompt.h): substitution, pruning of the history to
// the context, the built-in templates and an override folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "agents/llm/prompt.h"
#include "schedule/compiled_task.h"
#include "support/process_temp_dir.h"
#include "support/test_env.h"

namespace kf::agents::llm_brain {
namespace {

TEST(LlmPrompt, NamesAreSubstitutedOnceAndUnknownOnesStay) {
  const PromptVars v = {{"a", "1"}, {"b", "{{a}}"}};
  EXPECT_EQ(render_template("x{{a}}y{{b}}z", v), "x1y{{a}}z") << "values are not re-read";
  EXPECT_EQ(render_template("{{missing}} {{a", v), "{{missing}} {{a");
  EXPECT_EQ(render_template("{{A}}{{ a }}{{}}", v), "{{A}}{{ a }}{{}}");
  EXPECT_EQ(render_template("{{{a}}}", v), "{1}");
  EXPECT_EQ(render_template("", v), "");
}

TEST(LlmPrompt, HistoryIsPrunedOldestFirstAndTheNoteSaysHowMany) {
  std::vector<std::string> history;
  for (int i = 1; i <= 10; ++i)
    history.push_back("attempt " + std::to_string(i) + std::string(90, '.'));
  const std::string tmpl = "HEAD\n{{history_note}}{{history}}TAIL\n";
  Rendered all = render_pruned(tmpl, {}, history, 1 << 20);
  EXPECT_EQ(all.history_dropped, 0);
  EXPECT_EQ(all.text.find("left out"), std::string::npos);
  Rendered some = render_pruned(tmpl, {}, history, 500);
  EXPECT_LE(some.text.size(), 500u);
  EXPECT_GT(some.history_kept, 0);
  EXPECT_EQ(some.history_kept + some.history_dropped, 10);
  EXPECT_NE(some.text.find(std::to_string(some.history_dropped) + " older attempt(s) left out"),
            std::string::npos);
  EXPECT_NE(some.text.find("attempt 10"), std::string::npos) << "the newest are kept";
  EXPECT_EQ(some.text.find("attempt 1."), std::string::npos) << "the oldest go first";
  Rendered none = render_pruned(tmpl, {}, history, 10);
  EXPECT_EQ(none.history_kept, 0);
  EXPECT_NE(none.text.find("10 older attempt(s)"), std::string::npos);
  EXPECT_NE(render_pruned(tmpl, {}, {}, 100).text.find("(no attempts yet)"), std::string::npos);
}

TEST(LlmPrompt, TheBuiltInTemplatesRenderFromTheTask) {
  auto task = compile_task(kf::testing::source_dir() / "tests/integration/written_source/task");
  ASSERT_TRUE(task) << task.error().message();
  PromptVars v = task_vars(*task, {.threads = 2});
  add_best(v, nullptr);
  v["plan"] = "tile";
  for (const char* name : {"planner", "implementer", "debugger"}) {
    auto t = load_prompt("", name);
    ASSERT_TRUE(t) << t.error().message();
    const std::string text =
        render_pruned(*t, v, {"1. [implementer] plan \"x\": ok"}, 1 << 20).text;
    EXPECT_NE(text.find("void rmsnorm(const float* x, const float* w, float* y"), std::string::npos)
        << name;
    EXPECT_NE(text.find("ms[n]   = sum(d: x[n, d] * x[n, d]) / D"), std::string::npos) << name;
    EXPECT_NE(text.find("plan \"x\": ok"), std::string::npos) << name;
  }
  auto planner = load_prompt("", "planner");
  const std::string p = render_template(*planner, v);
  EXPECT_NE(p.find("`register_block` mr=6 nr=32"), std::string::npos) << "the catalog is listed";
  EXPECT_NE(p.find("## Expected effect"), std::string::npos);
}

TEST(LlmPrompt, AnOverrideFolderReplacesOnlyTheTemplatesItHas) {
  const auto dir = kf::testing::process_temp_dir("kf_llm_prompt") / "prompts";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "planner.md") << "MY PLANNER {{task_name}}";
  EXPECT_EQ(*load_prompt(dir, "planner"), "MY PLANNER {{task_name}}");
  auto builtin = load_prompt(dir, "implementer");
  ASSERT_TRUE(builtin);
  EXPECT_NE(builtin->find("Implementer"), std::string::npos);
  std::ofstream(dir / "debugger.md") << std::string(kMaxTemplateBytes + 1, 'x');
  auto big = load_prompt(dir, "debugger");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message().find("over"), std::string::npos);
  EXPECT_FALSE(load_prompt(dir, "no_such_role"));
}

}  // namespace
}  // namespace kf::agents::llm_brain
