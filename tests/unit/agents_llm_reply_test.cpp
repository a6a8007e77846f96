// Reading a model's replies (agents/llm/reply.h): the one C++ block, the planner's sections,
// and hostile text (huge, no fences, nested fences, NUL bytes, cut short).
#include <gtest/gtest.h>

#include <string>

#include "agents/llm/reply.h"

namespace kf::agents::llm_brain {
namespace {

TEST(LlmReply, TheOneCppBlockIsTheCandidate) {
  auto c = single_cpp_block("Here:\n\n```cpp\nint f() { return 1; }\n```\nDone.");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(*c, "int f() { return 1; }\n");
  // Unlabelled and c++ blocks count; json and text blocks do not.
  EXPECT_EQ(*single_cpp_block("```\nint a;\n```\n"), "int a;\n");
  EXPECT_EQ(*single_cpp_block("```json\n{}\n```\n```C++\nint b;\r\n```\r\n"), "int b;\n");
}

TEST(LlmReply, ZeroSeveralOrUnclosedBlocksBreakTheContract) {
  auto none = single_cpp_block("I would tile the loop by 32.");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("no ```cpp"), std::string::npos);
  auto two = single_cpp_block("```cpp\nint a;\n```\nor\n```cpp\nint b;\n```\n");
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message().find("2 C++ code blocks"), std::string::npos);
  auto cut = single_cpp_block("```cpp\nvoid f() {\n  for (int i = 0; i <");
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().message().find("closing ``` is missing"), std::string::npos);
}

TEST(LlmReply, HostileTextIsReadNotTrusted) {
  // Over the size read: refused without scanning.
  std::string huge(kMaxReplyBytes + 1, 'x');
  EXPECT_FALSE(single_cpp_block(huge));
  EXPECT_FALSE(parse_plan_sections(huge));
  // Nested fences: a markdown block holding a cpp block is one markdown block (not C++), and
  // the stray closing fence after it opens nothing harmful.
  auto nested = single_cpp_block("```markdown\n```cpp\nint a;\n```\n```\n");
  EXPECT_FALSE(nested);
  // NUL bytes pass through the reader as bytes (the screening refuses them).
  const std::string with_nul("```cpp\nint a;\0int b;\n```\n", 25);
  auto n = single_cpp_block(with_nul);
  ASSERT_TRUE(n) << n.error().message();
  EXPECT_EQ(n->size(), 14u);
  // Many fences and lines: linear, bounded.
  std::string many;
  for (int i = 0; i < 20000; ++i) many += "```\n";
  EXPECT_FALSE(single_cpp_block(many));  // 10000 empty blocks: "several"
  EXPECT_FALSE(single_cpp_block(std::string(500000, '`')));
}

TEST(LlmReply, ThePlannersSectionsInAnyHeadingLevel) {
  auto s = parse_plan_sections(
      "Some preamble.\n# Analysis\nscalar loop\n### Bottleneck:\nadds\n## **Strategy**\n"
      "register_block mr=4 nr=64 bogus=3 lanes=0\n## Expected effect\nabout 2.5x faster\n");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->analysis, "scalar loop");
  EXPECT_EQ(s->bottleneck, "adds");
  const Plan p = plan_from_sections(*s);
  EXPECT_EQ(p.strategy, "register_block");
  EXPECT_EQ(p.knobs.at("mr"), 4);
  EXPECT_EQ(p.knobs.at("nr"), 64);
  EXPECT_EQ(p.knobs.count("bogus"), 0u) << "only the strategy's own knobs";
  EXPECT_DOUBLE_EQ(p.expected_speedup, 2.5);
  EXPECT_EQ(p.analysis, "scalar loop");
}

TEST(LlmReply, FreeTextStopAndMissingSections) {
  auto free = parse_plan_sections(
      "## Analysis\na\n## Bottleneck\nb\n## Strategy\nFuse the two passes over x.\n"
      "## Expected effect\nunclear\n");
  ASSERT_TRUE(free);
  Plan p = plan_from_sections(*free);
  EXPECT_EQ(p.strategy, "");
  EXPECT_EQ(p.text, "Fuse the two passes over x.");
  EXPECT_EQ(p.id(), p.text);
  EXPECT_DOUBLE_EQ(p.expected_speedup, 1.0);
  auto stop = parse_plan_sections(
      "## Analysis\nat the roofline\n## Bottleneck\nDRAM\n## Strategy\n`stop`\n## Expected effect\n"
      "1x\n");
  ASSERT_TRUE(stop);
  EXPECT_EQ(plan_from_sections(*stop).strategy, "stop");
  auto missing = parse_plan_sections("## Analysis\na\n## Strategy\n\n");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("## Bottleneck"), std::string::npos);
  EXPECT_NE(missing.error().message().find("## Strategy"), std::string::npos) << "empty";
  EXPECT_NE(missing.error().message().find("## Expected effect"), std::string::npos);
  // A speedup out of bounds is clamped.
  auto wild = parse_plan_sections(
      "## Analysis\n.\n## Bottleneck\n.\n## Strategy\nx\n## Expected effect\n100000x\n");
  EXPECT_DOUBLE_EQ(plan_from_sections(*wild).expected_speedup, 100.0);
}

}  // namespace
}  // namespace kf::agents::llm_brain
