#include <gtest/gtest.h>

#include <cmath>

#include "store/sqlite.h"
#include "support/fs.h"

namespace kf::sql {
namespace {

class StoreSqliteWrapper : public ::testing::Test {
 protected:
  void SetUp() override {
    auto d = Db::open(dir_.path() / "t.db", 1000);
    ASSERT_TRUE(d) << d.error().message();
    db_.emplace(std::move(*d));
    ASSERT_TRUE(db().exec("CREATE TABLE t (a TEXT, b INTEGER, c REAL)").ok());
  }
  Db& db() { return *db_; }
  int64_t count() {
    auto st = Statement::prepare(db(), "SELECT count(*) FROM t");
    EXPECT_TRUE(st && *st->step());
    return st->int64(0);
  }

  TempDir dir_{"kforge-sqlite"};
  std::optional<Db> db_;
};

TEST_F(StoreSqliteWrapper, BindsAndReadsEveryType) {
  auto ins = Statement::prepare(db(), "INSERT INTO t VALUES (?, ?, ?)");
  ASSERT_TRUE(ins);
  const std::string with_nul("a\0b", 3);
  ins->bind(with_nul, 42, 2.5);
  ASSERT_TRUE(ins->run().ok());
  auto nulls = Statement::prepare(db(), "INSERT INTO t VALUES (?, 7, ?)");
  ASSERT_TRUE(nulls);
  nulls->bind(OptionalText{""}, std::nan(""));  // both stored as NULL
  ASSERT_TRUE(nulls->run().ok());

  auto sel = Statement::prepare(db(), "SELECT a, b, c, a IS NULL FROM t ORDER BY b DESC");
  ASSERT_TRUE(sel);
  ASSERT_TRUE(*sel->step());
  EXPECT_EQ(sel->text(0), with_nul);
  EXPECT_EQ(sel->int64(1), 42);
  EXPECT_DOUBLE_EQ(sel->real(2), 2.5);
  ASSERT_TRUE(*sel->step());
  EXPECT_EQ(sel->text(0), "");
  EXPECT_EQ(sel->int64(3), 1);
  EXPECT_TRUE(std::isnan(sel->real(2)));
  EXPECT_FALSE(*sel->step());
}

TEST_F(StoreSqliteWrapper, ErrorsNameTheFile) {
  auto bad = Statement::prepare(db(), "SELEC nonsense");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("t.db"), std::string::npos) << bad.error().message();
  EXPECT_NE(bad.error().message().find("syntax error"), std::string::npos);
  Status s = db().exec("INSERT INTO missing VALUES (1)");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("t.db"), std::string::npos);
  EXPECT_NE(s.message().find("no such table: missing"), std::string::npos) << s.message();
}

TEST_F(StoreSqliteWrapper, StepReportsConstraintFailures) {
  ASSERT_TRUE(db().exec("CREATE TABLE u (k TEXT PRIMARY KEY)").ok());
  auto ins = Statement::prepare(db(), "INSERT INTO u VALUES ('x'), ('x')");
  ASSERT_TRUE(ins);
  auto r = ins->step();
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("UNIQUE constraint failed"), std::string::npos);
  EXPECT_NE(ins->last_error_code(), 0);
}

TEST_F(StoreSqliteWrapper, TransactionRollsBackUnlessCommitted) {
  {
    auto tx = Transaction::begin(db());
    ASSERT_TRUE(tx);
    ASSERT_TRUE(db().exec("INSERT INTO t VALUES ('dropped', 1, 1)").ok());
  }
  EXPECT_EQ(count(), 0);
  {
    auto tx = Transaction::begin(db());
    ASSERT_TRUE(tx);
    ASSERT_TRUE(db().exec("INSERT INTO t VALUES ('kept', 1, 1)").ok());
    ASSERT_TRUE(tx->commit().ok());
  }
  EXPECT_EQ(count(), 1);
  EXPECT_EQ(db().changes(), 1);
}

TEST_F(StoreSqliteWrapper, OpenFailsInAMissingDirectory) {
  auto d = Db::open(dir_.path() / "no" / "such" / "dir" / "x.db", 100);
  ASSERT_FALSE(d);
  EXPECT_NE(d.error().message().find("x.db"), std::string::npos) << d.error().message();
}

}  // namespace
}  // namespace kf::sql
