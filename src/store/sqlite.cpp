#include "store/sqlite.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <limits>

#include "support/check.h"

namespace kf::sql {

Expected<Db> Db::open(const std::filesystem::path& path, int busy_timeout_ms) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Db db(raw, path);  // owns the handle even when opening failed
  if (rc != SQLITE_OK) {
    if (raw == nullptr) return Status::error(path.string() + ": cannot open: out of memory");
    return db.error("cannot open");
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, busy_timeout_ms);
  return db;
}

Db::Db(Db&& other) noexcept : db_(other.db_), path_(std::move(other.path_)) {
  other.db_ = nullptr;
}

Db& Db::operator=(Db&& other) noexcept {
  if (this == &other) return *this;
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = other.db_;
  path_ = std::move(other.path_);
  other.db_ = nullptr;
  return *this;
}

Db::~Db() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Status Db::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK) return ok_status();
  std::string what = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  std::string first_line = text.substr(0, text.find('\n'));
  return Status::error(fmt::format("{}: {}: {}", path_.string(), first_line, what));
}

Status Db::error(std::string_view what) const {
  return Status::error(fmt::format("{}: {}: {}", path_.string(), what, message()));
}

std::string Db::message() const {
  return db_ != nullptr ? sqlite3_errmsg(db_) : "no connection";
}

int Db::changes() const {
  return sqlite3_changes(db_);
}

Expected<Statement> Statement::prepare(Db& db, std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc =
      sqlite3_prepare_v2(db.handle(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return db.error(fmt::format("preparing '{}'", sql.substr(0, 60)));
  }
  return Statement(db, stmt);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(other.stmt_), last_error_(other.last_error_) {
  other.stmt_ = nullptr;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

// A bind fails only on a wrong index or a value over SQLite's limits (1 GB): kforge bugs.
void Statement::bind_one(int i, std::string_view v) {
  int rc = sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  KF_CHECK(rc == SQLITE_OK) << "bind text " << i << ": " << sqlite3_errstr(rc);
}

void Statement::bind_one(int i, OptionalText v) {
  if (!v.text.empty()) return bind_one(i, v.text);
  int rc = sqlite3_bind_null(stmt_, i);
  KF_CHECK(rc == SQLITE_OK) << "bind null " << i << ": " << sqlite3_errstr(rc);
}

void Statement::bind_one(int i, int64_t v) {
  int rc = sqlite3_bind_int64(stmt_, i, v);
  KF_CHECK(rc == SQLITE_OK) << "bind int " << i << ": " << sqlite3_errstr(rc);
}

void Statement::bind_one(int i, double v) {
  int rc = sqlite3_bind_double(stmt_, i, v);  // NaN is stored as NULL
  KF_CHECK(rc == SQLITE_OK) << "bind double " << i << ": " << sqlite3_errstr(rc);
}

Expected<bool> Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  last_error_ = rc;
  const char* sql = sqlite3_sql(stmt_);
  std::string_view head = sql != nullptr ? std::string_view(sql).substr(0, 40) : "statement";
  return db_->error(fmt::format("running '{}'", head));
}

Status Statement::run() {
  while (true) {
    Expected<bool> row = step();
    if (!row) return row.error();
    if (!*row) return ok_status();
  }
}

std::string Statement::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(p),
                     static_cast<size_t>(sqlite3_column_bytes(stmt_, column)));
}

int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const {
  if (sqlite3_column_type(stmt_, column) == SQLITE_NULL)
    return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, column);
}

Expected<Transaction> Transaction::begin(Db& db) {
  KF_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  return Transaction(db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)db_->exec("ROLLBACK");
}

Status Transaction::commit() {
  KF_CHECK(db_ != nullptr) << "commit of a finished transaction";
  Status s = db_->exec("COMMIT");
  if (!s.ok()) return s;  // still open: the destructor rolls back
  db_ = nullptr;
  return ok_status();
}

}  // namespace kf::sql
