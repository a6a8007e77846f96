#include <fmt/format.h>
#include <gtest/gtest.h>

#include "store/schema.h"
#include "support/fs.h"

namespace kf {
namespace {

Expected<int64_t> query_int(sql::Db& db, const char* q) {
  auto st = sql::Statement::prepare(db, q);
  if (!st) return st.error();
  auto row = st->step();
  if (!row) return row.error();
  return st->int64(0);
}

sql::Db open_db(const TempDir& dir) {
  auto db = sql::Db::open(dir.path() / "s.db", 1000);
  KF_CHECK(db.has_value()) << db.error().message();
  return std::move(*db);
}

TEST(StoreSchema, OneMigrationStepPerVersion) {
  EXPECT_EQ(static_cast<int>(schema_migrations().size()), kSchemaVersion);
}

TEST(StoreSchema, PrepareCreatesTheLatestSchemaOnceAndTagsTheFile) {
  TempDir dir("kforge-schema");
  sql::Db db = open_db(dir);
  ASSERT_TRUE(prepare_schema(db).ok());
  EXPECT_EQ(*schema_version(db), kSchemaVersion);
  EXPECT_EQ(*query_int(db, "PRAGMA application_id"), kStoreApplicationId);
  EXPECT_EQ(*query_int(db, "PRAGMA foreign_keys"), 1);
  EXPECT_EQ(*query_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"), 6);
  Status again = prepare_schema(db);  // already current: nothing to do
  EXPECT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(*schema_version(db), kSchemaVersion);
}

// A store written before the LLM exchanges table (version 1) is migrated in place: its rows are
// kept and the new table is added empty.
TEST(StoreSchema, AVersionOneStoreGainsTheExchangesTableAndKeepsItsRows) {
  TempDir dir("kforge-schema");
  sql::Db db = open_db(dir);
  ASSERT_TRUE(db.exec(fmt::format("PRAGMA application_id = {}", kStoreApplicationId)).ok());
  ASSERT_TRUE(db.exec(schema_migrations()[0]).ok());
  ASSERT_TRUE(db.exec("PRAGMA user_version = 1").ok());
  ASSERT_TRUE(db.exec("INSERT INTO runs VALUES ('r1', 'd', 't', 'optimize', 'builtin', '{}', "
                      "'running', 'a', 'b', '', '{}')")
                  .ok());
  Status s = prepare_schema(db);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(*schema_version(db), kSchemaVersion);
  EXPECT_EQ(*query_int(db, "SELECT count(*) FROM runs"), 1);
  EXPECT_EQ(*query_int(db, "SELECT count(*) FROM llm_exchanges"), 0);
}

TEST(StoreSchema, ForeignSqliteFilesAreRefused) {
  TempDir dir("kforge-schema");
  {
    sql::Db db = open_db(dir);
    ASSERT_TRUE(db.exec("CREATE TABLE notes (t TEXT)").ok());
    Status s = prepare_schema(db);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("not a kforge run store"), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("s.db"), std::string::npos);
    EXPECT_EQ(*query_int(db, "SELECT count(*) FROM sqlite_master"), 1);  // untouched
  }
  std::filesystem::remove(dir.path() / "s.db");
  sql::Db db = open_db(dir);
  ASSERT_TRUE(db.exec("PRAGMA application_id = 1234").ok());
  Status s = prepare_schema(db);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("application_id 0x4d2"), std::string::npos) << s.message();
}

TEST(StoreSchema, NewerVersionsAreRefused) {
  TempDir dir("kforge-schema");
  sql::Db db = open_db(dir);
  ASSERT_TRUE(prepare_schema(db).ok());
  ASSERT_TRUE(db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1)).ok());
  Status s = prepare_schema(db);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("newer kforge"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace kf
