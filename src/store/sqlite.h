// Thin RAII wrappers over the SQLite C API, for the run store: a connection (sql::Db), a
// prepared statement with bound parameters (sql::Statement) and a write transaction
// (sql::Transaction) that rolls back unless committed. Every error message names the file.
//
//   auto db = sql::Db::open(path, /*busy_timeout_ms=*/5000);
//   if (!db) return db.error();
//   auto tx = sql::Transaction::begin(*db);                     // BEGIN IMMEDIATE
//   if (!tx) return tx.error();
//   auto st = sql::Statement::prepare(*db, "INSERT INTO t(a, b) VALUES (?, ?)");
//   if (!st) return st.error();
//   st->bind(std::string("x"), 42);
//   if (auto done = st->step(); !done) return done.error();
//   KF_RETURN_IF_ERROR(tx->commit());
//
// Text parameters are bound as copies (SQLITE_TRANSIENT); an empty OptionalText binds NULL.
// Reading a NULL REAL gives NaN, so NaN round-trips (SQLite itself stores NaN as NULL).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "support/status.h"

struct sqlite3;
struct sqlite3_stmt;

namespace kf::sql {

class Db {
 public:
  // Opens (creating if missing) the database file, with extended result codes on and the given
  // busy timeout. Does not read the file yet: a garbage file fails on the first statement.
  static Expected<Db> open(const std::filesystem::path& path, int busy_timeout_ms);

  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // Runs one or more statements without parameters (pragmas, schema text).
  Status exec(std::string_view sql);

  // A failure message: "<file>: <what>: <SQLite's message>".
  Status error(std::string_view what) const;

  std::string message() const;  // SQLite's message for the last failure on this connection
  int changes() const;          // rows changed by the last INSERT, UPDATE or DELETE
  sqlite3* handle() const { return db_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  Db(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_ = nullptr;
  std::filesystem::path path_;
};

// A text parameter that is NULL when empty (optional foreign keys).
struct OptionalText {
  std::string_view text;
};

class Statement {
 public:
  static Expected<Statement> prepare(Db& db, std::string_view sql);

  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) = delete;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Binds the arguments to parameters 1, 2, ... in order.
  template <typename... Args>
  Statement& bind(const Args&... args) {
    int i = 1;
    (bind_one(i++, args), ...);
    return *this;
  }

  // Runs to the next row: true when a row is ready, false when the statement is done.
  Expected<bool> step();
  // Runs a statement that returns no rows (or whose rows are ignored) to completion.
  Status run();

  std::string text(int column) const;  // NULL reads as ""
  int64_t int64(int column) const;
  double real(int column) const;  // NULL reads as NaN

  // The extended result code of the last failed step (e.g. SQLITE_CONSTRAINT_PRIMARYKEY).
  int last_error_code() const { return last_error_; }

 private:
  Statement(Db& db, sqlite3_stmt* stmt) : db_(&db), stmt_(stmt) {}
  void bind_one(int i, std::string_view v);
  void bind_one(int i, const std::string& v) { bind_one(i, std::string_view(v)); }
  void bind_one(int i, const char* v) { bind_one(i, std::string_view(v)); }
  void bind_one(int i, OptionalText v);
  void bind_one(int i, int64_t v);
  void bind_one(int i, int v) { bind_one(i, static_cast<int64_t>(v)); }
  void bind_one(int i, double v);

  Db* db_;
  sqlite3_stmt* stmt_;
  int last_error_ = 0;
};

// BEGIN IMMEDIATE on construction (takes the write lock up front, waiting up to the busy
// timeout); ROLLBACK on destruction unless commit() succeeded.
class Transaction {
 public:
  static Expected<Transaction> begin(Db& db);

  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();

  Status commit();

 private:
  explicit Transaction(Db& db) : db_(&db) {}
  Db* db_;  // null once committed or rolled back
};

}  // namespace kf::sql
