// The LLM brain's session: what its roles share within one run — the endpoint settings, one
// client per role, the usage meter with the run's budget, the record of every exchange, the
// history of attempts the prompts show, and the candidates already written (for dedup).
//
//   auto s = std::make_shared<Session>(SessionOptions{.config = *cfg, .budget = {.max_cost = 2}});
//   KF_RETURN_IF_ERROR(s->probe());                      // at start: fails in seconds
//   s->begin_run(stored_exchanges, record_fn);           // a resumed run answers from its record
//   Expected<Answer> a = s->ask(LlmRole::implementer, messages);
//
// Design notes
// ------------
// Budget: ask() checks the meter before each call and fails with the meter's message once the
// budget is spent.
// Halting: a spent budget, or a call that got no answer (a refused key, an unknown model, the
// retries spent on 429/5xx/timeouts), halts the session: halted() says why, and the mode stops
// the run there, resumable, writing nothing for the step it was in. A reply that came but did
// not read (not JSON, no content) does not halt: the role asks again once, as for a reply that
// breaks its contract.
// Record: each call, answered or failed, is handed to the record function (the store's
// llm_exchanges for `kforge optimize`) with its request and response bodies verbatim.
// Resume: the optimize loop replays a resumed run from its start, asking every role again. The
// run's recorded exchanges are therefore answered again in order, without the model, while
// each asks the same role that was asked then (their usage counted once, when loaded); the first
// role that differs, or the end of the record, switches to the model. So a resumed run reaches
// the candidates the killed one had, and pays for none of them twice. A recorded call that got
// no answer is not answered again: the run halted there, and the resumed run asks the model.
// Not thread-safe: the loop calls one role at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "llm/client.h"
#include "llm/config.h"
#include "llm/exchange_record.h"
#include "llm/usage.h"
#include "support/status.h"

namespace kf::agents::llm_brain {

using ExchangeRecord = llm::ExchangeRecord;

// One attempt's outcome, for the prompts' history.
struct AttemptNote {
  std::string role;     // who wrote the candidate: "implementer", "debugger"
  std::string plan;     // the plan's id
  std::string verdict;  // the judge's, or "screened out", "no code"
  std::string message;
  double speedup = 0;  // over the best at the time (0: not ok)
};

using ClientFactory =
    std::function<std::unique_ptr<llm::ChatClient>(const llm::LlmSettings& settings)>;
using RecordFn = std::function<Status(const ExchangeRecord&)>;

struct SessionOptions {
  llm::LlmConfig config;
  llm::Budget budget;
  ClientFactory make_client;  // default: a ChatClient with default ClientOptions
  // The model's context when neither the settings nor the probe say (tokens).
  int64_t default_context_tokens = 32768;
};

class Session {
 public:
  explicit Session(SessionOptions o);

  // Probes every role's endpoint once (distinct base URL and model) and checks a cost budget can
  // be priced. Fails naming the role and the endpoint. Later calls return the first result.
  Status probe();
  // The run starts: `recorded` (a resumed run's stored exchanges, in order) are answered again
  // before the model is asked; `record` receives every new exchange (nullptr: kept in memory).
  void begin_run(std::vector<ExchangeRecord> recorded, RecordFn record);

  struct Answer {
    std::string content;
    bool truncated = false;
    bool replayed = false;
  };
  // One chat completion for `role`: the budget checked, the call recorded. Fails on a spent
  // budget, a failed call (its message names the endpoint, never the key or the prompt), or a
  // failed record.
  Expected<Answer> ask(llm::LlmRole role, const std::vector<llm::ChatMessage>& messages);
  Status check_budget() const { return meter_.check_budget(); }
  // Why the session halted ("" while it has not): the run stops, resumable.
  const std::string& halted() const { return halted_; }
  const llm::UsageMeter& meter() const { return meter_; }
  // Characters a prompt for `role` may take: 4 per token of the context, less a quarter kept
  // for the reply.
  size_t prompt_chars(llm::LlmRole role) const;
  const std::filesystem::path& prompts_dir() const { return options_.config.prompts; }
  // Exchanges this process recorded (also those handed to the record function).
  const std::vector<ExchangeRecord>& exchanges() const { return exchanges_; }
  int replayed() const { return replayed_; }

  // History: the role that wrote the candidate about to be judged, then its outcome.
  void note_candidate(const std::string& role, const std::string& plan);
  void note_outcome(const std::string& verdict, const std::string& message, double speedup);
  const std::vector<AttemptNote>& history() const { return history_; }
  // The history as prompt lines, oldest first.
  std::vector<std::string> history_lines() const;

  // The source of an earlier candidate whose normalized text equals `normalized`, if any.
  std::optional<std::string> written_before(const std::string& normalized) const;
  void remember_written(const std::string& normalized, const std::string& source);

  // The planner's last evidence and plan, for the implementer's prompt.
  std::string last_evidence;

 private:
  llm::ChatClient& client(llm::LlmRole role);
  Status record(ExchangeRecord e);

  SessionOptions options_;
  llm::UsageMeter meter_;
  std::map<llm::LlmRole, std::unique_ptr<llm::ChatClient>> clients_;
  std::map<llm::LlmRole, int64_t> probed_context_;
  std::optional<Status> probed_;
  std::deque<ExchangeRecord> replay_;
  RecordFn record_;
  std::vector<ExchangeRecord> exchanges_;
  int replayed_ = 0;
  std::string halted_;
  std::vector<AttemptNote> history_;
  std::optional<AttemptNote> pending_;
  std::map<std::string, std::string> written_;  // normalized -> source
};

// The session `kforge optimize` made for this process (nullptr when none): the LLM brain's
// roles use it when their BrainOptions name none.
std::shared_ptr<Session> process_session();
void set_process_session(std::shared_ptr<Session> s);

// The session for a brain's options: theirs, else the process's, else a new one from
// ./kforge.toml when it exists and the OPENAI_* variables (installed as the process's).
Expected<std::shared_ptr<Session>> session_for(const std::shared_ptr<Session>& given);

}  // namespace kf::agents::llm_brain
