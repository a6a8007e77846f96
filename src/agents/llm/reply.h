// Reading a model's reply: the implementer's and debugger's one C++ code block, and the
// planner's fixed sections. A reply is untrusted text: these readers are linear, bounded and
// never throw; a reply that breaks the contract gets a message saying how, for the corrective
// re-ask and the record.
//
//   Expected<std::string> code = single_cpp_block(reply.content);   // one ```cpp block
//   Expected<PlanSections> s = parse_plan_sections(reply.content);   // ## Analysis ... sections
//   Plan p = plan_from_sections(*s);                                  // a catalog id, else text
//
// Code blocks: a line that starts with ``` opens a fence, its info string the language; the
// next line that is only ``` (spaces aside) closes it. Blocks in C++ (cpp, c++, cxx, cc, c, or no
// language) count; others (json, text, a markdown block holding a nested fence) do not. A fence
// left open at the end (a truncated reply) is a contract break, and so are zero or several C++
// blocks.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "agents/messages.h"
#include "support/status.h"

namespace kf::agents::llm_brain {

// The largest reply read; a longer one breaks the contract (no kernel is that long).
inline constexpr size_t kMaxReplyBytes = size_t{1} << 20;

struct FencedBlock {
  std::string language;  // lower case, "" when none
  std::string text;
  bool closed = true;
};

// Every fenced block, in order (bounded by the reply's length).
std::vector<FencedBlock> fenced_blocks(std::string_view reply);

// The one C++ block's text. Fails on a reply over kMaxReplyBytes, one without a C++ block, with
// several, or with a fence left open.
Expected<std::string> single_cpp_block(std::string_view reply);

// The planner's contract: four sections under Markdown headings (any level), in any order:
// Analysis, Bottleneck, Strategy, Expected effect.
struct PlanSections {
  std::string analysis, bottleneck, strategy, expected_effect;
};

// Fails naming the sections missing (a reply over kMaxReplyBytes fails too).
Expected<PlanSections> parse_plan_sections(std::string_view reply);

// The plan the sections describe. The strategy section's first word naming a catalog strategy
// (agents/strategy.h) makes a strategy plan, with knobs written after it as name=value (only the
// strategy's own knobs, values 1 to 2^20), so a built-in implementer can carry it out; "stop"
// ends the run; anything else is a free-text plan for an implementer that writes C++. The
// expected effect's first "N.Nx" is the expected speedup (1 to 100; 1 when absent).
Plan plan_from_sections(const PlanSections& s);

}  // namespace kf::agents::llm_brain
