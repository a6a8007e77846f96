// The LLM brain's session for one `kforge optimize` invocation: its settings (--llm-config FILE,
// else ./kforge.toml, else the OPENAI_* variables), its budget (--max-tokens, --max-cost), and
// its record in the run store. The mode hands it to the brains it makes
// (OptimizeOptions::llm), and it listens to the run's events: when the run starts
// (new or resumed) the run's stored exchanges are loaded, to be answered again on a resume, and
// every new exchange is stored under the run.
//
//   auto llm = LlmRun::make({.config = "kforge.toml", .max_cost = 2.0}, store, o.events);
//   o.events = llm->get();             // forwards every event to the sink it was given
//   o.llm = (*llm)->session();
//   ... optimize(o, store) ...
//   fmt::print("{}", (*llm)->usage_line());
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "agents/llm/session.h"
#include "modes/events.h"
#include "modes/optimize.h"
#include "store/store.h"

namespace kf {

using LlmRunArgs = OptimizeOptions::LlmArgs;

// Whether a team spec gives any role to the LLM brain.
bool team_uses_llm(const std::string& spec);

// --llm-config, --max-tokens and --max-cost for a command that runs a team (search, chat).
void add_llm_options(CLI::App* cmd, LlmRunArgs& args);

class LlmRun final : public EventSink {
 public:
  // Fails when the settings file does not read.
  static Expected<std::unique_ptr<LlmRun>> make(const LlmRunArgs& args, Store& store,
                                                EventSink* next);
  // The arguments a new run stores: the settings file's absolute path (./kforge.toml's when
  // that is what was read; "" for the variables) and the budgets.
  static LlmRunArgs to_store(const LlmRunArgs& given);
  void on(const Event& e) override;
  // "llm: 7 calls, 12345 tokens, $0.0123" ("" when no call was made); why a record failed.
  std::string usage_line() const;
  const Status& status() const { return status_; }
  std::shared_ptr<agents::llm_brain::Session> session() const { return session_; }

 private:
  LlmRun(std::shared_ptr<agents::llm_brain::Session> s, Store& store, EventSink* next)
      : session_(std::move(s)), store_(store), next_(next) {}
  std::shared_ptr<agents::llm_brain::Session> session_;
  Store& store_;
  EventSink* next_;
  Status status_;
};

}  // namespace kf
