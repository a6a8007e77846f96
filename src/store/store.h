// The run store: everything an optimization run does, recorded so that a run killed at any
// point (SIGKILL included) resumes without losing or repeating a measurement.
//
// Two implementations share this interface and one contract test suite
// (tests/contract/store_contract_test.cpp): SqliteStore (sqlite_store.h), the real one, and
// MemoryStore (memory_store.h), a double for tests of modes and agents.
//
//   auto store = SqliteStore::open(default_store_path());       // ~/.local/share/kforge/runs.db
//   if (!store) return store.error();
//   RunRecord run{.id = new_run_id(), .task_dir = dir, .task_name = "matmul",
//                 .mode = "optimize", .brain = "builtin"};
//   KF_RETURN_IF_ERROR((*store)->create_run(run));
//   KF_RETURN_IF_ERROR((*store)->put_candidate(candidate));
//   std::string ekey = evaluation_key(candidate.key, task_identity, machine.fingerprint, 8);
//   auto seen = (*store)->find_evaluation(ekey);                 // measured before? reuse it
//   ...
//   KF_RETURN_IF_ERROR((*store)->record_evaluation(evaluation, attempt));  // one transaction
//
// Design notes
// ------------
// Records. A run (RunRecord) is one invocation of a mode on one task. Candidates
// (CandidateRecord) and evaluations (EvaluationRecord) are global and keyed by content, so a
// second run on the same task and machine reuses every measurement the first one made. An
// attempt (AttemptRecord) is one step of a run — "we tried candidate C with strategy S and got
// verdict V" — and points at the evaluation that judged it, if any. Messages (MessageRecord) are
// the typed messages agents exchange within a run (Plan, Candidate, Diagnostics, ...).
//
// LLM exchanges (LlmExchangeRecord) are a run's calls to a model, stored verbatim (request and
// response bodies, model, tokens, latency, cost, role), so a run can be read back or resumed
// without asking the model again.
//
// Call order for one step of a run:
//   1. put_candidate(c)                  idempotent; the first write of a key wins
//   2. find_evaluation(ekey)             a hit means: do not measure again
//   3a. miss: measure, then record_evaluation(e, a)   evaluation + attempt in ONE transaction
//   3b. hit, or nothing was measured (compile refused, plan only): put_attempt(a)
//   4. update_run(id, state, best, summary) whenever the best candidate changes, and at the end.
// Sequence numbers of attempts and messages come from next_attempt_seq / next_message_seq; they
// start at 1 and are unique per run (a duplicate is an error, never an overwrite).
//
// Invariants (both implementations):
//   - An attempt refers only to an existing run, and to an existing candidate and evaluation
//     when its keys are non-empty; an evaluation refers to an existing candidate. A violation is
//     an error Status naming the missing record, and nothing is written.
//   - record_evaluation with an evaluation key that is already stored keeps the stored row
//     (first measurement wins; re-measuring means a new key) and still adds the attempt.
//   - Every write call is atomic: it happens entirely or not at all.
//   - Empty created_at / updated_at fields are filled with the current UTC time.
//   - list_runs is newest first (created_at descending, later insertion first on ties);
//     attempts and messages are in seq order.
//
// Durability (SqliteStore): WAL journal with synchronous=NORMAL. A committed call survives the
// process being killed (SIGKILL, crash, OOM killer); a power loss or OS crash may lose the last
// few commits but never corrupts the file or splits an evaluation from its attempt.
//
// Errors: reads and writes return Status / Expected. Failures of the environment (disk full,
// database locked past the busy timeout, corrupt file, schema from a newer kforge) carry a
// message naming the database file. Both implementations are safe to call from several threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "llm/exchange_record.h"
#include "support/status.h"

namespace kf {

// One invocation of a mode on a task.
struct RunRecord {
  std::string id;  // chosen by the caller, usually new_run_id()
  std::string task_dir, task_name;
  std::string mode;  // "optimize", "search", "chat"
  std::string brain;
  nlohmann::json options;  // the mode's options, as given
  // "running" (or killed while it ran), "stopped" (its team halted it), "interrupted" (Ctrl-C or
  // SIGTERM), "finished", "failed". The first three can be resumed (resumable_state).
  std::string state = "running";
  std::string created_at, updated_at;  // ISO 8601 UTC; filled by the store when empty
  std::string best_candidate;          // a candidate key, or ""
  nlohmann::json summary;

  nlohmann::json to_json() const;
  static Expected<RunRecord> from_json(const nlohmann::json& j);
};

inline bool resumable_state(const std::string& state) {
  return state == "running" || state == "stopped" || state == "interrupted";
}

// A candidate solution; global, keyed by content (source, flags, toolchain, target).
struct CandidateRecord {
  std::string key;
  std::string source;
  std::string schedule;  // the replayable schedule trace, "" if written by hand
  nlohmann::json knobs;
  nlohmann::json provenance;  // {"strategy": .., "parent": key, "brain": ..}
  std::string created_at;

  nlohmann::json to_json() const;
  static Expected<CandidateRecord> from_json(const nlohmann::json& j);
};

// One judged measurement of a candidate on a task, machine and thread count.
struct EvaluationRecord {
  std::string key;  // evaluation_key(candidate_key, task identity, machine, threads)
  std::string candidate_key;
  std::string task, machine;
  int threads = 1;
  std::string verdict;             // verdict_name(RunResult::verdict)
  double median_s = 0, min_s = 0;  // NaN when not timed; NaN round-trips
  nlohmann::json result;           // RunResult::to_json()
  std::string created_at;

  nlohmann::json to_json() const;
  static Expected<EvaluationRecord> from_json(const nlohmann::json& j);
};

// One step of a run.
struct AttemptRecord {
  std::string run_id;
  int seq = 0;       // from next_attempt_seq(run_id)
  std::string kind;  // "baseline", "plan", "tune", "debug", "final"
  std::string strategy;
  std::string candidate_key, evaluation_key;  // "" when there is none
  std::string verdict;
  double median_s = 0;
  double speedup = 0;  // over the run's baseline; NaN or 0 when unknown
  nlohmann::json detail;
  std::string created_at;

  nlohmann::json to_json() const;
  static Expected<AttemptRecord> from_json(const nlohmann::json& j);
};

// A message between two roles within a run. Plans are messages of type "Plan".
struct MessageRecord {
  std::string run_id;
  int seq = 0;  // from next_message_seq(run_id)
  std::string from_role, to_role;
  std::string type;  // "Plan", "Candidate", "Diagnostics", "TestReport", "Profile"
  nlohmann::json body;
  std::string created_at;

  nlohmann::json to_json() const;
  static Expected<MessageRecord> from_json(const nlohmann::json& j);
};

// One call of a run's LLM role to a model (llm/exchange_record.h), under its run.
struct LlmExchangeRecord : llm::ExchangeRecord {
  std::string run_id;
  int seq = 0;  // from next_llm_exchange_seq(run_id)
  std::string created_at;

  LlmExchangeRecord() = default;
  LlmExchangeRecord(std::string run, int sequence, llm::ExchangeRecord x)
      : llm::ExchangeRecord(std::move(x)), run_id(std::move(run)), seq(sequence) {}
  nlohmann::json to_json() const;
  static Expected<LlmExchangeRecord> from_json(const nlohmann::json& j);
};

class Store {
 public:
  virtual ~Store() = default;

  // Runs. create_run fails if the id exists; update_run fails if it does not, and sets
  // updated_at to now.
  virtual Status create_run(const RunRecord& run) = 0;
  virtual Expected<RunRecord> get_run(const std::string& id) = 0;
  virtual Expected<std::vector<RunRecord>> list_runs() = 0;  // newest first
  virtual Status update_run(const std::string& id, const std::string& state,
                            const std::string& best_candidate, const nlohmann::json& summary) = 0;

  // Candidates. put_candidate with a stored key is a no-op (the stored record is kept).
  virtual Status put_candidate(const CandidateRecord& candidate) = 0;
  virtual Expected<std::optional<CandidateRecord>> get_candidate(const std::string& key) = 0;

  // Evaluations. record_evaluation stores the evaluation (unless its key is stored already)
  // and the attempt in one transaction; the attempt's evaluation_key is set to e.key when
  // empty and must equal it otherwise.
  virtual Expected<std::optional<EvaluationRecord>> find_evaluation(const std::string& key) = 0;
  virtual Status record_evaluation(const EvaluationRecord& e, const AttemptRecord& a) = 0;
  virtual Expected<int64_t> count_evaluations() = 0;

  // Attempts without a new evaluation (a reused one, or none: compile refused, plan only).
  virtual Status put_attempt(const AttemptRecord& a) = 0;
  virtual Expected<std::vector<AttemptRecord>> attempts(const std::string& run_id) = 0;
  virtual Expected<int> next_attempt_seq(const std::string& run_id) = 0;  // 1 + max, from 1

  virtual Status put_message(const MessageRecord& m) = 0;
  virtual Expected<std::vector<MessageRecord>> messages(const std::string& run_id) = 0;
  virtual Expected<int> next_message_seq(const std::string& run_id) = 0;  // 1 + max, from 1

  // LLM exchanges, as messages are: the run must exist, a seq is never reused, in seq order.
  // The defaults fail (a store that keeps no exchanges: test doubles of other parts).
  virtual Status put_llm_exchange(const LlmExchangeRecord& e);
  virtual Expected<std::vector<LlmExchangeRecord>> llm_exchanges(const std::string& run_id);
  virtual Expected<int> next_llm_exchange_seq(const std::string& run_id);
};

// The run whose id is `id`, else the only run whose id starts with it (what every command that
// names a run accepts). Fails naming the id when no run matches, or listing some of the matches
// when several do.
Expected<RunRecord> find_run(Store& store, const std::string& id);

// The identity of one evaluation: a hash of the candidate key, the task identity, the machine
// fingerprint and the thread count. 32 hex digits. The task identity must cover every file of
// the task folder that can change a result (task/task_identity.h: a hash of their bytes), so an
// edited task never reads back a measurement of the task before the edit.
std::string evaluation_key(const std::string& candidate_key, const std::string& task_identity,
                           const std::string& machine, int threads);

// A fresh run id: "r" + UTC date and time + 4 random hex digits, e.g. "r20261202-153012-4f2a".
// Ids sort by creation time to the second.
std::string new_run_id();

// The current time, ISO 8601 UTC with milliseconds: "2026-12-02T15:30:12.345Z".
std::string utc_timestamp();

// $KFORGE_STORE when set and non-empty, else the user's data folder's runs.db
// ($XDG_DATA_HOME/kforge, by default ~/.local/share/kforge: support/fs.h data_dir), else (no
// HOME) <current directory>/.kforge/runs.db. `kforge --here` sets $KFORGE_STORE to the last.
std::filesystem::path default_store_path();

}  // namespace kf
