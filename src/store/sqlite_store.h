// SqliteStore: the run store in one SQLite file (default .kforge/runs.db, see
// default_store_path()). The interface, the call order and the invariants are in store.h.
//
//   auto store = SqliteStore::open(default_store_path());
//   if (!store) return store.error();   // "opening run store: .kforge/runs.db: ..."
//   Store& s = **store;
//
// On open: creates the parent directories and the file if missing; refuses a file that is not a
// SQLite database, a SQLite database that is not a kforge store, and a store written by a newer
// kforge (schema version above kSchemaVersion, schema.h); migrates an older store in place; sets
// journal_mode=WAL (persistent in the file), synchronous=NORMAL, foreign_keys=ON and the busy
// timeout. Every write is one BEGIN IMMEDIATE transaction, so several processes may share a file:
// a writer waits up to busy_timeout_ms for another, then fails with "database is locked".
//
// A store object is one connection: do not carry it across fork(); open another in the child.
//
// Durability: see store.h. A committed call survives SIGKILL of the process; with
// synchronous=NORMAL a power loss may drop the last commits, never half of one.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>

#include "store/sqlite.h"
#include "store/store.h"

namespace kf {

struct SqliteStoreOptions {
  int busy_timeout_ms = 5000;
};

class SqliteStore final : public Store {
 public:
  static Expected<std::unique_ptr<SqliteStore>> open(const std::filesystem::path& path,
                                                     const SqliteStoreOptions& options = {});

  const std::filesystem::path& path() const { return db_.path(); }

  Status create_run(const RunRecord& run) override;
  Expected<RunRecord> get_run(const std::string& id) override;
  Expected<std::vector<RunRecord>> list_runs() override;
  Status update_run(const std::string& id, const std::string& state,
                    const std::string& best_candidate, const nlohmann::json& summary) override;

  Status put_candidate(const CandidateRecord& candidate) override;
  Expected<std::optional<CandidateRecord>> get_candidate(const std::string& key) override;

  Expected<std::optional<EvaluationRecord>> find_evaluation(const std::string& key) override;
  Status record_evaluation(const EvaluationRecord& e, const AttemptRecord& a) override;
  Expected<int64_t> count_evaluations() override;

  Status put_attempt(const AttemptRecord& a) override;
  Expected<std::vector<AttemptRecord>> attempts(const std::string& run_id) override;
  Expected<int> next_attempt_seq(const std::string& run_id) override;

  Status put_message(const MessageRecord& m) override;
  Expected<std::vector<MessageRecord>> messages(const std::string& run_id) override;
  Expected<int> next_message_seq(const std::string& run_id) override;

  Status put_llm_exchange(const LlmExchangeRecord& e) override;
  Expected<std::vector<LlmExchangeRecord>> llm_exchanges(const std::string& run_id) override;
  Expected<int> next_llm_exchange_seq(const std::string& run_id) override;

 private:
  explicit SqliteStore(sql::Db db) : db_(std::move(db)) {}

  Status fail(std::string_view op, const std::string& message) const;
  Expected<bool> exists(std::string_view sql, const std::string& key);
  Status check_attempt(std::string_view op, const AttemptRecord& a, bool evaluation_pending);
  Status insert_attempt(const AttemptRecord& a);
  Expected<int> next_seq(std::string_view sql, const std::string& run_id);

  std::mutex mu_;  // one call at a time on the connection
  sql::Db db_;
};

}  // namespace kf
