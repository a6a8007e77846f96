// The LLM roles' prompts: Markdown templates users can read and override (prompts/planner.md,
// implementer.md, debugger.md; the [llm] setting `prompts = "DIR"` names a folder whose files
// replace them), rendered by plain {{name}} substitution from the typed messages.
//
//   auto t = load_prompt(session.prompts_dir(), "implementer");      // the text of the template
//   PromptVars v = task_vars(*in.task, in.ctx);                      // task, machine, catalog
//   v["plan"] = ...;
//   Rendered r = render_pruned(*t, v, history_lines, max_chars);     // oldest history dropped
//
// Substitution: "{{name}}" with name [a-z_]{1,40} is replaced by vars[name]; an unknown name is
// left as written (so a template's typo shows in the prompt, not as an empty hole). Nothing in a
// substituted value is substituted again. Every value is bounded by kMaxVarBytes.
//
// Pruning: the history of attempts is the one part that grows with the run. render_pruned drops
// the oldest entries until the prompt fits `max_chars` (a context of N tokens is taken as 4N
// characters, less what the reply needs), and {{history_note}} says how many were left out.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "agents/roles.h"
#include "support/status.h"

namespace kf::agents::llm_brain {

using PromptVars = std::map<std::string, std::string>;

inline constexpr size_t kMaxVarBytes = 256 * 1024;
inline constexpr size_t kMaxTemplateBytes = 64 * 1024;

// The built-in templates' folder (prompts/ in the source tree).
std::filesystem::path builtin_prompts_dir();

// prompts/NAME.md from `override_dir` when it has it, else the built-in one. Fails when neither
// reads, or the file is over kMaxTemplateBytes.
Expected<std::string> load_prompt(const std::filesystem::path& override_dir,
                                  const std::string& name);

std::string render_template(std::string_view tmpl, const PromptVars& vars);

struct Rendered {
  std::string text;
  int history_kept = 0, history_dropped = 0;
};

// `history` oldest first; it becomes {{history}} (one entry per line group) and
// {{history_note}}.
Rendered render_pruned(std::string_view tmpl, PromptVars vars,
                       const std::vector<std::string>& history, size_t max_chars);

// The variables every role's prompt may use: task_name, signature, te_spec, reference,
// machine, strategies.
PromptVars task_vars(const CompiledTask& task, const MoveContext& ctx);
// best_source and best_label ("the task's reference" when nothing better was found).
void add_best(PromptVars& v, const CandidateMsg* best);
std::string describe_evidence(const Evidence& e);

}  // namespace kf::agents::llm_brain
