#include "agents/llm/brain.h"

#include <fmt/format.h>

#include "agents/builtin/brain.h"
#include "agents/judge.h"
#include "agents/llm/prompt.h"
#include "agents/llm/reply.h"
#include "agents/llm/screen.h"
#include "harness/shim.h"
#include "support/text_scan.h"

namespace kf::agents::llm_brain {

using llm::LlmRole;

namespace {

constexpr const char* kSystem =
    "You are one role of kforge, a tool that searches for fast, correct C++ kernels. Every "
    "kernel you write is compiled and judged against an oracle on several shapes, then timed. "
    "Reply in exactly the format the prompt asks for.";

// The model's last reply, shown back in a corrective re-ask, at most this long.
constexpr size_t kEchoBytes = 64 * 1024;

std::vector<llm::ChatMessage> conversation(const std::string& prompt) {
  return {{"system", kSystem}, {"user", prompt}};
}

// Renders `name`'s template with the history pruned to fit the role's context.
Expected<std::string> render(Session& s, LlmRole role, const std::string& name, PromptVars v) {
  auto t = load_prompt(s.prompts_dir(), name);
  if (!t) return t.error();
  return render_pruned(*t, std::move(v), s.history_lines(), s.prompt_chars(role)).text;
}

CandidateMsg written(const std::string& source, const std::string& origin,
                     const std::string& parent, const WorkContext& in) {
  CandidateMsg c;
  c.source = source;
  c.kind = SourceKind::written;
  c.origin = origin;
  c.parent = parent;
  c.threads = in.ctx.threads;
  c.key = candidate_key(c.source, in.compile);
  return c;
}

// An earlier candidate's exact source when this one is the same kernel (its key then matches
// and the store answers instead of the judge).
std::string dedup(Session& s, const std::string& source) {
  const std::string n = normalized_source(source);
  if (auto earlier = s.written_before(n)) return *earlier;
  s.remember_written(n, source);
  return source;
}

}  // namespace

Expected<std::string> ask_for_code(Session& s, LlmRole role, const std::string& prompt,
                                   const Task& task) {
  std::vector<llm::ChatMessage> msgs = conversation(prompt);
  Status broken;
  for (int round = 0; round < 2; ++round) {
    auto a = s.ask(role, msgs);
    if (!a && !s.halted().empty()) return a.error();
    if (!a) {  // a reply that did not read: asked again, as for a broken contract
      broken = a.error();
      msgs.push_back({"user", "Your last reply could not be read (" + broken.message() +
                                  "). Reply again, in the format asked for above."});
      continue;
    }
    auto code = single_cpp_block(a->content);
    if (code && a->truncated)
      code = Status::error("the reply was cut short (finish_reason \"length\")");
    if (code) {
      Status screened = screen_candidate(*code, task);
      if (screened.ok()) return std::move(*code);
      code = Status::error("screened out, not compiled: " + screened.message());
    }
    broken = code.error();
    msgs.push_back({"assistant", a->content.substr(0, kEchoBytes)});
    msgs.push_back(
        {"user", fmt::format("Your reply broke the contract: {}\nReply again with exactly one "
                             "```cpp code block holding the whole translation unit, which "
                             "defines\n    {}\nand includes only standard or intrinsics "
                             "headers (or kforge/kernel.h).",
                             broken.message(), candidate_signature(task))});
  }
  return Status::error(fmt::format("the {}'s replies broke the contract twice: {}",
                                   llm::role_name(role), broken.message()));
}

Plan LlmPlanner::plan(const PlanInput& in) {
  const auto stop = [](std::string why) {
    Plan p;
    p.strategy = "stop";
    p.why = std::move(why);
    return p;
  };
  if (!in.task) return stop("no task");
  s_->last_evidence = describe_evidence(in.evidence);
  PromptVars v = task_vars(*in.task, in.ctx);
  add_best(v, in.best);
  v["evidence"] = s_->last_evidence;
  std::string tried;
  for (const std::string& t : in.tried) tried += "- " + excerpt(t, 200) + "\n";
  v["tried"] = tried.empty() ? "(none)\n" : tried;
  auto prompt = render(*s_, LlmRole::planner, "planner", std::move(v));
  if (!prompt) return stop("the LLM planner's prompt: " + prompt.error().message());
  std::vector<llm::ChatMessage> msgs = conversation(*prompt);
  Status broken;
  for (int round = 0; round < 2; ++round) {
    auto a = s_->ask(LlmRole::planner, msgs);
    if (!a && !s_->halted().empty())
      return stop("the LLM planner could not be asked: " + a.error().message());
    if (!a) {  // a reply that did not read: asked again, as for a broken contract
      broken = a.error();
      msgs.push_back({"user", "Your last reply could not be read (" + broken.message() +
                                  "). Reply again, in the format asked for above."});
      continue;
    }
    auto sections = parse_plan_sections(a->content);
    if (sections) {
      Plan p = plan_from_sections(*sections);
      s_->note_candidate("implementer", p.id());
      return p;
    }
    broken = sections.error();
    msgs.push_back({"assistant", a->content.substr(0, kEchoBytes)});
    msgs.push_back({"user", "Your reply broke the contract: " + broken.message() +
                                "\nReply again with the four sections ## Analysis, ## "
                                "Bottleneck, ## Strategy and ## Expected effect."});
  }
  return stop("the LLM planner's replies broke the contract twice: " + broken.message());
}

Expected<CandidateMsg> LlmImplementer::first(const WorkContext& in) {
  if (!in.task) return Status::error("no task");
  CandidateMsg c = written(in.task->task.reference_source, "reference", "", in);
  c.kind = SourceKind::imported;
  dedup(*s_, c.source);
  return c;
}

Expected<CandidateMsg> LlmImplementer::implement(const Plan& plan, const WorkContext& in) {
  if (!in.task) return Status::error("no task");
  PromptVars v = task_vars(*in.task, in.ctx);
  add_best(v, in.best);
  v["evidence"] = s_->last_evidence.empty() ? "(none)\n" : s_->last_evidence;
  std::string what = plan.strategy.empty() ? plan.text : plan.strategy;
  if (const Strategy* st = find_strategy(plan.strategy))
    what = fmt::format("{} ({}): {}", st->id, st->name, st->description);
  v["plan"] = what;
  v["plan_analysis"] = plan.analysis.empty() ? "(none)" : plan.analysis;
  v["plan_bottleneck"] = plan.bottleneck.empty() ? "(none)" : plan.bottleneck;
  auto prompt = render(*s_, LlmRole::implementer, "implementer", std::move(v));
  if (!prompt) return prompt.error();
  s_->note_candidate("implementer", plan.id());
  auto code = ask_for_code(*s_, LlmRole::implementer, *prompt, in.task->task);
  if (!code) {
    s_->note_outcome("no candidate", code.error().message(), 0);
    return code.error();
  }
  return written(dedup(*s_, *code), "llm:implementer", in.best ? in.best->key : "", in);
}

std::string failure_text(const RunResult& r) {
  std::string out =
      fmt::format("verdict: {}\n{}\n", verdict_name(r.verdict), excerpt(r.message, 2000));
  int n = 0;
  for (const auto& d : r.compile.diagnostics)
    if (d.severity == "error" && n++ < 20)
      out += fmt::format("{}:{}: error: {}\n", d.line, d.column, excerpt(d.message, 400));
  for (const auto& k : r.checks)
    if (!k.passed && n++ < 10)
      out += fmt::format("shape {}: {}{}\n", k.shape, excerpt(k.detail, 600),
                         k.worst.empty() ? "" : " (worst element: " + excerpt(k.worst, 200) + ")");
  return out;
}

DebugOutcome LlmDebugger::debug(const CandidateMsg& c, const RunResult& r, int attempt,
                                const WorkContext& in) {
  DebugOutcome out;
  out.diagnostics.message = r.message;
  out.diagnostics.phase = r.verdict == Verdict::compile_error  ? "compile"
                          : r.verdict == Verdict::wrong_answer ? "test"
                                                               : "run";
  for (const auto& k : r.checks)
    if (!k.passed) out.diagnostics.details.push_back(k.shape + ": " + k.detail);
  // Only what a model wrote is a model's to repair, once per failure.
  if (r.verdict == Verdict::ok || c.kind != SourceKind::written || attempt > 1 || !in.task)
    return out;
  PromptVars v = task_vars(*in.task, in.ctx);
  add_best(v, in.best);
  v["candidate_source"] = c.source;
  v["failure"] = failure_text(r);
  auto prompt = render(*s_, LlmRole::debugger, "debugger", std::move(v));
  auto code = prompt ? ask_for_code(*s_, LlmRole::debugger, *prompt, in.task->task)
                     : Expected<std::string>(prompt.error());
  if (!code) {
    out.diagnostics.details.push_back("the LLM debugger: " + code.error().message());
    return out;
  }
  s_->note_candidate("debugger", "repair of " + c.origin);
  out.repaired = written(dedup(*s_, *code), "llm:debugger", c.key, in);
  return out;
}

TestReport LlmTester::report(const RunResult& r, const RunResult* best) {
  TestReport t = builtin::BuiltinTester().report(r, best);
  s_->note_outcome(std::string(verdict_name(r.verdict)), r.verdict == Verdict::ok ? "" : r.message,
                   t.speedup_vs_best);
  return t;
}

}  // namespace kf::agents::llm_brain
