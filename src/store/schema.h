// The run store's SQLite schema, as a list of migrations: step i moves a database from schema
// version i to version i + 1 (version 0 is an empty file). SqliteStore::open applies the
// missing steps, each in its own transaction, and refuses a file whose version is newer than
// kSchemaVersion (written by a newer kforge).
//
//   auto db = sql::Db::open(path, 5000);
//   KF_RETURN_IF_ERROR(prepare_schema(*db));   // checks, pragmas, then the missing steps
//
// To change the schema: append a step (ALTER TABLE / CREATE ...; never edit a shipped step),
// bump kSchemaVersion, and teach the record readers in sqlite_store.cpp the new columns.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "store/sqlite.h"
#include "support/status.h"

namespace kf {

inline constexpr int kSchemaVersion = 2;

// Stored in the file header (PRAGMA application_id) so kforge can tell its own stores from other
// SQLite files: "kfrg".
inline constexpr int32_t kStoreApplicationId = 0x6b667267;

// kSchemaVersion steps; the SQL text of each (several statements, no parameters).
const std::vector<std::string_view>& schema_migrations();

// Makes an open connection ready for the store: reads the header (failing on a file that is not
// a SQLite database), refuses a newer schema version and foreign SQLite files, turns on WAL,
// synchronous=NORMAL and foreign keys, then applies the missing migration steps, each in one
// transaction that re-reads the version (another process may have migrated meanwhile).
Status prepare_schema(sql::Db& db);

// PRAGMA user_version of the file.
Expected<int> schema_version(sql::Db& db);

}  // namespace kf
