#include "store/schema.h"

#include <fmt/format.h>

#include <string>

namespace kf {
namespace {

// Version 0 -> 1: the first schema. JSON columns are TEXT; optional keys are NULL.
constexpr std::string_view kVersion1 = R"sql(
CREATE TABLE runs (
  id             TEXT PRIMARY KEY,
  task_dir       TEXT NOT NULL,
  task_name      TEXT NOT NULL,
  mode           TEXT NOT NULL,
  brain          TEXT NOT NULL,
  options        TEXT NOT NULL,  -- JSON
  state          TEXT NOT NULL,  -- running | finished | failed
  created_at     TEXT NOT NULL,  -- ISO 8601 UTC
  updated_at     TEXT NOT NULL,
  best_candidate TEXT NOT NULL,  -- a candidate key or ''
  summary        TEXT NOT NULL   -- JSON
);
CREATE INDEX runs_by_created ON runs(created_at);

CREATE TABLE candidates (
  key        TEXT PRIMARY KEY,
  source     TEXT NOT NULL,
  schedule   TEXT NOT NULL,  -- schedule trace, '' when hand written
  knobs      TEXT NOT NULL,  -- JSON
  provenance TEXT NOT NULL,  -- JSON
  created_at TEXT NOT NULL
);

CREATE TABLE evaluations (
  key           TEXT PRIMARY KEY,
  candidate_key TEXT NOT NULL REFERENCES candidates(key),
  task          TEXT NOT NULL,
  machine       TEXT NOT NULL,
  threads       INTEGER NOT NULL,
  verdict       TEXT NOT NULL,
  median_s      REAL,           -- NULL when not timed
  min_s         REAL,
  result        TEXT NOT NULL,  -- JSON: RunResult::to_json()
  created_at    TEXT NOT NULL
);
CREATE INDEX evaluations_by_candidate ON evaluations(candidate_key);

CREATE TABLE attempts (
  run_id         TEXT NOT NULL REFERENCES runs(id),
  seq            INTEGER NOT NULL,
  kind           TEXT NOT NULL,
  strategy       TEXT NOT NULL,
  candidate_key  TEXT REFERENCES candidates(key),   -- NULL when none
  evaluation_key TEXT REFERENCES evaluations(key),  -- NULL when none
  verdict        TEXT NOT NULL,
  median_s       REAL,
  speedup        REAL,
  detail         TEXT NOT NULL,  -- JSON
  created_at     TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX attempts_by_evaluation ON attempts(evaluation_key);

CREATE TABLE messages (
  run_id     TEXT NOT NULL REFERENCES runs(id),
  seq        INTEGER NOT NULL,
  from_role  TEXT NOT NULL,
  to_role    TEXT NOT NULL,
  type       TEXT NOT NULL,  -- Plan | Candidate | Diagnostics | TestReport | Profile
  body       TEXT NOT NULL,  -- JSON
  created_at TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
)sql";

// Version 1 -> 2: a run's LLM exchanges, verbatim (a store of version 1 gains the empty table).
constexpr std::string_view kVersion2 = R"sql(
CREATE TABLE llm_exchanges (
  run_id            TEXT NOT NULL REFERENCES runs(id),
  seq               INTEGER NOT NULL,
  role              TEXT NOT NULL,
  model             TEXT NOT NULL,
  request           TEXT NOT NULL,  -- the HTTP body, verbatim
  response          TEXT NOT NULL,  -- the HTTP body, verbatim ('' when none came)
  prompt_tokens     INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  latency_s         REAL NOT NULL,
  cost              REAL NOT NULL,
  attempts          INTEGER NOT NULL,
  error             TEXT NOT NULL,  -- '' when the model answered
  created_at        TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
);
)sql";

// The first column of the first row of a statement without parameters, as an integer.
Expected<int64_t> query_int(sql::Db& db, std::string_view sql) {
  auto st = sql::Statement::prepare(db, sql);
  if (!st) return st.error();
  auto row = st->step();
  if (!row) return row.error();
  if (!*row) return db.error(fmt::format("'{}' returned no row", sql));
  return st->int64(0);
}

Expected<std::string> query_text(sql::Db& db, std::string_view sql) {
  auto st = sql::Statement::prepare(db, sql);
  if (!st) return st.error();
  auto row = st->step();
  if (!row) return row.error();
  if (!*row) return db.error(fmt::format("'{}' returned no row", sql));
  return st->text(0);
}

Status refuse(const sql::Db& db, const std::string& why) {
  return Status::error(fmt::format("{}: {}", db.path().string(), why));
}

struct Header {
  int64_t version, application_id, objects;
};

// The first read of the file (a file that is not a SQLite database fails here), in one
// statement so the figures come from one snapshot even while another process migrates.
Expected<Header> read_header(sql::Db& db) {
  auto st = sql::Statement::prepare(
      db,
      "SELECT v.user_version, a.application_id, (SELECT count(*) FROM sqlite_master) "
      "FROM pragma_user_version AS v, pragma_application_id AS a");
  if (!st) return st.error();
  auto row = st->step();
  if (!row) return row.error();
  KF_CHECK(*row) << "the header query returned no row";
  return Header{st->int64(0), st->int64(1), st->int64(2)};
}

// Applies step `from` (version from -> from + 1) unless another connection already did.
Status migrate_step(sql::Db& db, int from) {
  auto tx = sql::Transaction::begin(db);
  if (!tx) return tx.error();
  auto version = schema_version(db);
  if (!version) return version.error();
  if (*version > from) return ok_status();  // done meanwhile; the destructor rolls back
  if (from == 0) {
    auto tables = query_int(db, "SELECT count(*) FROM sqlite_master");
    if (!tables) return tables.error();
    if (*tables > 0) return refuse(db, "not a kforge run store (a SQLite file with other tables)");
    KF_RETURN_IF_ERROR(db.exec(fmt::format("PRAGMA application_id = {}", kStoreApplicationId)));
  }
  KF_RETURN_IF_ERROR(db.exec(schema_migrations()[static_cast<size_t>(from)]));
  KF_RETURN_IF_ERROR(db.exec(fmt::format("PRAGMA user_version = {}", from + 1)));
  return tx->commit();
}

}  // namespace

Expected<int> schema_version(sql::Db& db) {
  auto v = query_int(db, "PRAGMA user_version");
  if (!v) return v.error();
  return static_cast<int>(*v);
}

Status prepare_schema(sql::Db& db) {
  auto header = read_header(db);
  if (!header)
    return refuse(db, fmt::format("not a kforge run store, or corrupt ({})", db.message()));
  const auto [version, app, objects] = *header;
  if (version > kSchemaVersion)
    return refuse(db, fmt::format("written by a newer kforge (schema version {}; this kforge reads "
                                  "versions up to {}); upgrade kforge or use another store",
                                  version, kSchemaVersion));
  if (app != 0 && app != kStoreApplicationId)
    return refuse(db, fmt::format("not a kforge run store (application_id {:#x})", app));
  if (version == 0 && objects > 0)
    return refuse(db, "not a kforge run store (a SQLite file with other tables)");
  // Touch nothing before the checks above: a foreign file is left as it was.
  auto mode = query_text(db, "PRAGMA journal_mode = WAL");
  if (!mode) return mode.error();
  if (*mode != "wal")
    return refuse(db, fmt::format("cannot use WAL journal mode (got '{}'); is the file on a "
                                  "network file system?",
                                  *mode));
  KF_RETURN_IF_ERROR(db.exec("PRAGMA synchronous = NORMAL"));
  KF_RETURN_IF_ERROR(db.exec("PRAGMA foreign_keys = ON"));
  const int steps = static_cast<int>(schema_migrations().size());
  KF_CHECK(steps == kSchemaVersion) << steps << " migration steps for version " << kSchemaVersion;
  for (int from = static_cast<int>(version); from < kSchemaVersion; ++from) {
    Status s = migrate_step(db, from);
    if (!s.ok()) return s.with_context(fmt::format("migrating to schema version {}", from + 1));
  }
  return ok_status();
}

const std::vector<std::string_view>& schema_migrations() {
  static const std::vector<std::string_view> steps = {kVersion1, kVersion2};
  return steps;
}

}  // namespace kf
