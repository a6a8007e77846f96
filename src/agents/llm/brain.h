// The LLM brain: any OpenAI-compatible model (llm/client.h) as planner, implementer and
// debugger, through prompt templates users can read and override (prompts/*.md, prompt.h).
//
//   kforge optimize TASK --brain llm --llm-config kforge.toml --max-cost 2
//   kforge optimize TASK --brain planner=llm,implementer=builtin   # plans as catalog strategies
//
// Roles and their contracts:
//   planner      replies with four sections (## Analysis, ## Bottleneck, ## Strategy,
//                ## Expected effect); a Strategy naming a catalog id (with name=value knobs) is a
//                strategy plan a built-in implementer can carry out, "stop" ends the run, other
//                text is a free-text plan.
// Once the budget is spent, or a call gets no answer, the session halts (session.h): the role
// returns a stop plan or an error saying why, and the mode stops the run there, resumable.
//   implementer  replies with exactly one ```cpp block, the whole translation unit. The run's
//                first candidate is the task's reference, imported.
//   debugger     gets a written candidate's compiler diagnostics or the judge's failed checks
//                (the first bad index and values) and replies as the implementer does; its
//                repair is a written candidate with origin "llm:debugger".
//   tester       the built-in tester's report, noted in the history the prompts show.
// A reply that breaks its contract (no code block, several, one cut short, a candidate the
// static screening refuses: screen.h), or one that does not read (not JSON), gets ONE
// corrective re-ask; a second break is a recorded
// failure (the implementer's error, which the loop records as not applicable; the debugger's
// diagnostics). A candidate whose normalized source equals one written before in the run is
// handed in as that one's exact source, so its key matches and the store answers for it.
// No role needs a TE spec.
#pragma once

#include <algorithm>
#include <memory>

#include "agents/llm/session.h"
#include "agents/roles.h"

namespace kf::agents::llm_brain {

class LlmPlanner : public Planner {
 public:
  explicit LlmPlanner(std::shared_ptr<Session> s) : s_(std::move(s)) {}
  Plan plan(const PlanInput& in) override;
  // One plan per call, whatever `max` is: each plan costs a model call, and a search expands a
  // node again when it wants another.
  std::vector<Plan> proposals(const PlanInput& in, size_t max) override {
    return Planner::proposals(in, std::min<size_t>(max, 1));
  }

 private:
  std::shared_ptr<Session> s_;
};

class LlmImplementer : public Implementer {
 public:
  explicit LlmImplementer(std::shared_ptr<Session> s) : s_(std::move(s)) {}
  Expected<CandidateMsg> first(const WorkContext& in) override;
  Expected<CandidateMsg> implement(const Plan& plan, const WorkContext& in) override;

 private:
  std::shared_ptr<Session> s_;
};

class LlmDebugger : public Debugger {
 public:
  explicit LlmDebugger(std::shared_ptr<Session> s) : s_(std::move(s)) {}
  DebugOutcome debug(const CandidateMsg& c, const RunResult& r, int attempt,
                     const WorkContext& in) override;

 private:
  std::shared_ptr<Session> s_;
};

class LlmTester : public Tester {
 public:
  explicit LlmTester(std::shared_ptr<Session> s) : s_(std::move(s)) {}
  TestReport report(const RunResult& r, const RunResult* best) override;

 private:
  std::shared_ptr<Session> s_;
};

// What the debugger is told about a failed judgement: the compiler's errors, or the failed
// checks (shape, first bad index, values), or the judge's message; bounded.
std::string failure_text(const RunResult& r);

// The code the model writes for `role`: one C++ block that passes screening, with one
// corrective re-ask. Fails with the contract break or the call's error.
Expected<std::string> ask_for_code(Session& s, llm::LlmRole role, const std::string& prompt,
                                   const Task& task);

}  // namespace kf::agents::llm_brain
