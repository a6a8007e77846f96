#include "store/sqlite_store.h"

#include <fmt/format.h>

#include <system_error>

#include "store/schema.h"
#include "support/json_text.h"

namespace kf {
namespace {

using json = nlohmann::json;
using sql::OptionalText;
using sql::Statement;

constexpr std::string_view kRunColumns =
    "id, task_dir, task_name, mode, brain, options, state, created_at, updated_at, "
    "best_candidate, summary";
constexpr std::string_view kCandidateColumns =
    "key, source, schedule, knobs, provenance, created_at";
constexpr std::string_view kEvaluationColumns =
    "key, candidate_key, task, machine, threads, verdict, median_s, min_s, result, created_at";
constexpr std::string_view kAttemptColumns =
    "run_id, seq, kind, strategy, candidate_key, evaluation_key, verdict, median_s, speedup, "
    "detail, created_at";
constexpr std::string_view kMessageColumns =
    "run_id, seq, from_role, to_role, type, body, created_at";
constexpr std::string_view kExchangeColumns =
    "run_id, seq, role, model, request, response, prompt_tokens, completion_tokens, latency_s, "
    "cost, attempts, error, created_at";

std::string now_if_empty(const std::string& t) {
  return t.empty() ? utc_timestamp() : t;
}

// JSON as column text. Invalid UTF-8 (a candidate's output, say) becomes U+FFFD, never a throw.
std::string to_text(const json& j) {
  return dump_json(j);
}

// Reads the JSON columns of a row; a malformed value (a damaged or hand-edited file) is an
// error naming the file, the table and the column.
class JsonColumns {
 public:
  JsonColumns(const Statement& st, const sql::Db& db, const char* table)
      : st_(st), db_(db), table_(table) {}
  JsonColumns& read(int column, const char* name, json& out) {
    if (!status_.ok()) return *this;
    out = json::parse(st_.text(column), nullptr, /*allow_exceptions=*/false);
    if (out.is_discarded())
      status_ = Status::error(
          fmt::format("{}: malformed JSON in {}.{}", db_.path().string(), table_, name));
    return *this;
  }
  const Status& status() const { return status_; }

 private:
  const Statement& st_;
  const sql::Db& db_;
  const char* table_;
  Status status_;
};

Expected<RunRecord> read_run(const Statement& st, const sql::Db& db) {
  RunRecord r{.id = st.text(0),
              .task_dir = st.text(1),
              .task_name = st.text(2),
              .mode = st.text(3),
              .brain = st.text(4),
              .state = st.text(6),
              .created_at = st.text(7),
              .updated_at = st.text(8),
              .best_candidate = st.text(9)};
  JsonColumns j(st, db, "runs");
  j.read(5, "options", r.options).read(10, "summary", r.summary);
  if (!j.status().ok()) return j.status();
  return r;
}

Expected<CandidateRecord> read_candidate(const Statement& st, const sql::Db& db) {
  CandidateRecord c{
      .key = st.text(0), .source = st.text(1), .schedule = st.text(2), .created_at = st.text(5)};
  JsonColumns j(st, db, "candidates");
  j.read(3, "knobs", c.knobs).read(4, "provenance", c.provenance);
  if (!j.status().ok()) return j.status();
  return c;
}

Expected<EvaluationRecord> read_evaluation(const Statement& st, const sql::Db& db) {
  EvaluationRecord e{.key = st.text(0),
                     .candidate_key = st.text(1),
                     .task = st.text(2),
                     .machine = st.text(3),
                     .threads = static_cast<int>(st.int64(4)),
                     .verdict = st.text(5),
                     .median_s = st.real(6),
                     .min_s = st.real(7),
                     .created_at = st.text(9)};
  JsonColumns j(st, db, "evaluations");
  j.read(8, "result", e.result);
  if (!j.status().ok()) return j.status();
  return e;
}

Expected<AttemptRecord> read_attempt(const Statement& st, const sql::Db& db) {
  AttemptRecord a{.run_id = st.text(0),
                  .seq = static_cast<int>(st.int64(1)),
                  .kind = st.text(2),
                  .strategy = st.text(3),
                  .candidate_key = st.text(4),
                  .evaluation_key = st.text(5),
                  .verdict = st.text(6),
                  .median_s = st.real(7),
                  .speedup = st.real(8),
                  .created_at = st.text(10)};
  JsonColumns j(st, db, "attempts");
  j.read(9, "detail", a.detail);
  if (!j.status().ok()) return j.status();
  return a;
}

Expected<MessageRecord> read_message(const Statement& st, const sql::Db& db) {
  MessageRecord m{.run_id = st.text(0),
                  .seq = static_cast<int>(st.int64(1)),
                  .from_role = st.text(2),
                  .to_role = st.text(3),
                  .type = st.text(4),
                  .created_at = st.text(6)};
  JsonColumns j(st, db, "messages");
  j.read(5, "body", m.body);
  if (!j.status().ok()) return j.status();
  return m;
}

Expected<LlmExchangeRecord> read_exchange(const Statement& st, const sql::Db&) {
  LlmExchangeRecord e(st.text(0), static_cast<int>(st.int64(1)),
                      {.role = st.text(2),
                       .model = st.text(3),
                       .request = st.text(4),
                       .response = st.text(5),
                       .prompt_tokens = st.int64(6),
                       .completion_tokens = st.int64(7),
                       .latency_s = st.real(8),
                       .cost = st.real(9),
                       .attempts = static_cast<int>(st.int64(10)),
                       .error = st.text(11)});
  e.created_at = st.text(12);
  return e;
}

// Every row of a prepared, bound query, read by `read_row`.
template <typename T>
Expected<std::vector<T>> all_rows(Statement& st, const sql::Db& db,
                                  Expected<T> (*read_row)(const Statement&, const sql::Db&)) {
  std::vector<T> out;
  while (true) {
    auto row = st.step();
    if (!row) return row.error();
    if (!*row) return out;
    auto record = read_row(st, db);
    if (!record) return record.error();
    out.push_back(std::move(*record));
  }
}

// The first row of a prepared, bound query, if any.
template <typename T>
Expected<std::optional<T>> first_row(Statement& st, const sql::Db& db,
                                     Expected<T> (*read_row)(const Statement&, const sql::Db&)) {
  auto row = st.step();
  if (!row) return row.error();
  if (!*row) return std::optional<T>();
  auto record = read_row(st, db);
  if (!record) return record.error();
  return std::optional<T>(std::move(*record));
}

}  // namespace

Expected<std::unique_ptr<SqliteStore>> SqliteStore::open(const std::filesystem::path& path,
                                                         const SqliteStoreOptions& options) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    return Status::error(fmt::format("opening run store: {}: cannot create directory {}: {}",
                                     path.string(), path.parent_path().string(), ec.message()));
  auto db = sql::Db::open(path, options.busy_timeout_ms);
  if (!db) return db.error().with_context("opening run store");
  Status s = prepare_schema(*db);
  if (!s.ok()) return s.with_context("opening run store");
  return std::unique_ptr<SqliteStore>(new SqliteStore(std::move(*db)));
}

Status SqliteStore::fail(std::string_view op, const std::string& message) const {
  return Status::error(fmt::format("{}: {}: {}", db_.path().string(), op, message));
}

Expected<bool> SqliteStore::exists(std::string_view sql, const std::string& key) {
  auto st = Statement::prepare(db_, sql);
  if (!st) return st.error();
  st->bind(key);
  return st->step();
}

Status SqliteStore::create_run(const RunRecord& run) {
  std::lock_guard lock(mu_);
  if (run.id.empty()) return fail("create_run", "the run needs an id");
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  auto taken = exists("SELECT 1 FROM runs WHERE id = ?", run.id);
  if (!taken) return taken.error();
  if (*taken) return fail("create_run", fmt::format("run '{}' already exists", run.id));
  auto st = Statement::prepare(
      db_, fmt::format("INSERT INTO runs ({}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", kRunColumns));
  if (!st) return st.error();
  std::string created = now_if_empty(run.created_at);
  std::string updated = run.updated_at.empty() ? created : run.updated_at;
  st->bind(run.id, run.task_dir, run.task_name, run.mode, run.brain, to_text(run.options),
           run.state, created, updated, run.best_candidate, to_text(run.summary));
  KF_RETURN_IF_ERROR(st->run());
  return tx->commit();
}

Expected<RunRecord> SqliteStore::get_run(const std::string& id) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(db_, fmt::format("SELECT {} FROM runs WHERE id = ?", kRunColumns));
  if (!st) return st.error();
  st->bind(id);
  auto run = first_row(*st, db_, &read_run);
  if (!run) return run.error();
  if (!*run) return fail("get_run", fmt::format("no run '{}'", id));
  return std::move(**run);
}

Expected<std::vector<RunRecord>> SqliteStore::list_runs() {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(
      db_, fmt::format("SELECT {} FROM runs ORDER BY created_at DESC, rowid DESC", kRunColumns));
  if (!st) return st.error();
  return all_rows(*st, db_, &read_run);
}

Status SqliteStore::update_run(const std::string& id, const std::string& state,
                               const std::string& best_candidate, const json& summary) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(
      db_,
      "UPDATE runs SET state = ?, best_candidate = ?, summary = ?, updated_at = ? WHERE id = ?");
  if (!st) return st.error();
  st->bind(state, best_candidate, to_text(summary), utc_timestamp(), id);
  KF_RETURN_IF_ERROR(st->run());
  if (db_.changes() == 0) return fail("update_run", fmt::format("no run '{}'", id));
  return ok_status();
}

Status SqliteStore::put_candidate(const CandidateRecord& c) {
  std::lock_guard lock(mu_);
  if (c.key.empty()) return fail("put_candidate", "the candidate needs a key");
  auto st = Statement::prepare(
      db_,
      fmt::format("INSERT OR IGNORE INTO candidates ({}) VALUES (?,?,?,?,?,?)", kCandidateColumns));
  if (!st) return st.error();
  st->bind(c.key, c.source, c.schedule, to_text(c.knobs), to_text(c.provenance),
           now_if_empty(c.created_at));
  return st->run();  // a single statement is its own transaction
}

Expected<std::optional<CandidateRecord>> SqliteStore::get_candidate(const std::string& key) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(
      db_, fmt::format("SELECT {} FROM candidates WHERE key = ?", kCandidateColumns));
  if (!st) return st.error();
  st->bind(key);
  return first_row(*st, db_, &read_candidate);
}

Expected<std::optional<EvaluationRecord>> SqliteStore::find_evaluation(const std::string& key) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(
      db_, fmt::format("SELECT {} FROM evaluations WHERE key = ?", kEvaluationColumns));
  if (!st) return st.error();
  st->bind(key);
  return first_row(*st, db_, &read_evaluation);
}

// The checks of store.h's invariants, with messages naming the missing record. Called inside
// the write transaction, so they see what the insert will see.
Status SqliteStore::check_attempt(std::string_view op, const AttemptRecord& a,
                                  bool evaluation_pending) {
  auto run = exists("SELECT 1 FROM runs WHERE id = ?", a.run_id);
  if (!run) return run.error();
  if (!*run) return fail(op, fmt::format("no run '{}'", a.run_id));
  if (!a.candidate_key.empty()) {
    auto c = exists("SELECT 1 FROM candidates WHERE key = ?", a.candidate_key);
    if (!c) return c.error();
    if (!*c) return fail(op, fmt::format("no candidate '{}'", a.candidate_key));
  }
  if (!a.evaluation_key.empty() && !evaluation_pending) {
    auto e = exists("SELECT 1 FROM evaluations WHERE key = ?", a.evaluation_key);
    if (!e) return e.error();
    if (!*e) return fail(op, fmt::format("no evaluation '{}'", a.evaluation_key));
  }
  auto st = Statement::prepare(db_, "SELECT 1 FROM attempts WHERE run_id = ? AND seq = ?");
  if (!st) return st.error();
  st->bind(a.run_id, a.seq);
  auto taken = st->step();
  if (!taken) return taken.error();
  if (*taken)
    return fail(op, fmt::format("attempt (run '{}', seq {}) already exists", a.run_id, a.seq));
  return ok_status();
}

Status SqliteStore::insert_attempt(const AttemptRecord& a) {
  auto st = Statement::prepare(
      db_,
      fmt::format("INSERT INTO attempts ({}) VALUES (?,?,?,?,?,?,?,?,?,?,?)", kAttemptColumns));
  if (!st) return st.error();
  st->bind(a.run_id, a.seq, a.kind, a.strategy, OptionalText{a.candidate_key},
           OptionalText{a.evaluation_key}, a.verdict, a.median_s, a.speedup, to_text(a.detail),
           now_if_empty(a.created_at));
  return st->run();
}

Status SqliteStore::record_evaluation(const EvaluationRecord& e, const AttemptRecord& attempt) {
  std::lock_guard lock(mu_);
  constexpr std::string_view op = "record_evaluation";
  AttemptRecord a = attempt;
  if (a.evaluation_key.empty()) a.evaluation_key = e.key;
  if (a.candidate_key.empty()) a.candidate_key = e.candidate_key;
  if (e.key.empty() || e.candidate_key.empty())
    return fail(op, "the evaluation needs a key and a candidate_key");
  if (a.evaluation_key != e.key)
    return fail(op, fmt::format("the attempt's evaluation_key '{}' is not the evaluation's '{}'",
                                a.evaluation_key, e.key));
  if (a.candidate_key != e.candidate_key)
    return fail(op, fmt::format("the attempt's candidate_key '{}' is not the evaluation's '{}'",
                                a.candidate_key, e.candidate_key));
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  KF_RETURN_IF_ERROR(check_attempt(op, a, /*evaluation_pending=*/true));
  auto st = Statement::prepare(
      db_, fmt::format("INSERT OR IGNORE INTO evaluations ({}) VALUES (?,?,?,?,?,?,?,?,?,?)",
                       kEvaluationColumns));
  if (!st) return st.error();
  st->bind(e.key, e.candidate_key, e.task, e.machine, e.threads, e.verdict, e.median_s, e.min_s,
           to_text(e.result), now_if_empty(e.created_at));
  KF_RETURN_IF_ERROR(st->run());
  KF_RETURN_IF_ERROR(insert_attempt(a));
  return tx->commit();
}

Expected<int64_t> SqliteStore::count_evaluations() {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(db_, "SELECT count(*) FROM evaluations");
  if (!st) return st.error();
  auto row = st->step();
  if (!row) return row.error();
  return st->int64(0);
}

Status SqliteStore::put_attempt(const AttemptRecord& a) {
  std::lock_guard lock(mu_);
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  KF_RETURN_IF_ERROR(check_attempt("put_attempt", a, /*evaluation_pending=*/false));
  KF_RETURN_IF_ERROR(insert_attempt(a));
  return tx->commit();
}

Expected<std::vector<AttemptRecord>> SqliteStore::attempts(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(
      db_, fmt::format("SELECT {} FROM attempts WHERE run_id = ? ORDER BY seq", kAttemptColumns));
  if (!st) return st.error();
  st->bind(run_id);
  return all_rows(*st, db_, &read_attempt);
}

Expected<int> SqliteStore::next_seq(std::string_view sql, const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(db_, sql);
  if (!st) return st.error();
  st->bind(run_id);
  auto row = st->step();
  if (!row) return row.error();
  return static_cast<int>(st->int64(0));
}

Expected<int> SqliteStore::next_attempt_seq(const std::string& run_id) {
  return next_seq("SELECT coalesce(max(seq), 0) + 1 FROM attempts WHERE run_id = ?", run_id);
}

Status SqliteStore::put_message(const MessageRecord& m) {
  std::lock_guard lock(mu_);
  constexpr std::string_view op = "put_message";
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  auto run = exists("SELECT 1 FROM runs WHERE id = ?", m.run_id);
  if (!run) return run.error();
  if (!*run) return fail(op, fmt::format("no run '{}'", m.run_id));
  auto taken = Statement::prepare(db_, "SELECT 1 FROM messages WHERE run_id = ? AND seq = ?");
  if (!taken) return taken.error();
  taken->bind(m.run_id, m.seq);
  auto dup = taken->step();
  if (!dup) return dup.error();
  if (*dup)
    return fail(op, fmt::format("message (run '{}', seq {}) already exists", m.run_id, m.seq));
  auto st = Statement::prepare(
      db_, fmt::format("INSERT INTO messages ({}) VALUES (?,?,?,?,?,?,?)", kMessageColumns));
  if (!st) return st.error();
  st->bind(m.run_id, m.seq, m.from_role, m.to_role, m.type, to_text(m.body),
           now_if_empty(m.created_at));
  KF_RETURN_IF_ERROR(st->run());
  return tx->commit();
}

Expected<std::vector<MessageRecord>> SqliteStore::messages(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(
      db_, fmt::format("SELECT {} FROM messages WHERE run_id = ? ORDER BY seq", kMessageColumns));
  if (!st) return st.error();
  st->bind(run_id);
  return all_rows(*st, db_, &read_message);
}

Expected<int> SqliteStore::next_message_seq(const std::string& run_id) {
  return next_seq("SELECT coalesce(max(seq), 0) + 1 FROM messages WHERE run_id = ?", run_id);
}

Status SqliteStore::put_llm_exchange(const LlmExchangeRecord& e) {
  std::lock_guard lock(mu_);
  constexpr std::string_view op = "put_llm_exchange";
  auto tx = sql::Transaction::begin(db_);
  if (!tx) return tx.error();
  auto run = exists("SELECT 1 FROM runs WHERE id = ?", e.run_id);
  if (!run) return run.error();
  if (!*run) return fail(op, fmt::format("no run '{}'", e.run_id));
  auto taken = Statement::prepare(db_, "SELECT 1 FROM llm_exchanges WHERE run_id = ? AND seq = ?");
  if (!taken) return taken.error();
  taken->bind(e.run_id, e.seq);
  auto dup = taken->step();
  if (!dup) return dup.error();
  if (*dup)
    return fail(op, fmt::format("llm exchange (run '{}', seq {}) already exists", e.run_id, e.seq));
  auto st = Statement::prepare(
      db_, fmt::format("INSERT INTO llm_exchanges ({}) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       kExchangeColumns));
  if (!st) return st.error();
  st->bind(e.run_id, e.seq, e.role, e.model, e.request, e.response, e.prompt_tokens,
           e.completion_tokens, e.latency_s, e.cost, e.attempts, e.error,
           now_if_empty(e.created_at));
  KF_RETURN_IF_ERROR(st->run());
  return tx->commit();
}

Expected<std::vector<LlmExchangeRecord>> SqliteStore::llm_exchanges(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto st = Statement::prepare(
      db_,
      fmt::format("SELECT {} FROM llm_exchanges WHERE run_id = ? ORDER BY seq", kExchangeColumns));
  if (!st) return st.error();
  st->bind(run_id);
  return all_rows(*st, db_, &read_exchange);
}

Expected<int> SqliteStore::next_llm_exchange_seq(const std::string& run_id) {
  return next_seq("SELECT coalesce(max(seq), 0) + 1 FROM llm_exchanges WHERE run_id = ?", run_id);
}

}  // namespace kf
