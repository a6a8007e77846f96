// MemoryStore beyond the shared contract (tests/contract/store_contract_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "store/memory_store.h"
#include "unit/store_test_util.h"

namespace kf {
namespace {

using namespace store_test;

TEST(MemoryStore, InstancesAreIndependent) {
  MemoryStore a, b;
  ASSERT_TRUE(a.create_run(run("r1")).ok());
  EXPECT_TRUE(a.get_run("r1"));
  EXPECT_FALSE(b.get_run("r1"));
  EXPECT_TRUE(b.list_runs()->empty());
}

TEST(MemoryStore, ErrorsSayWhichStore) {
  MemoryStore s;
  Status st = s.put_attempt(attempt("r1", 1, "", ""));
  EXPECT_EQ(st.message(), "memory store: put_attempt: no run 'r1'");
}

// What a SQLite round trip does to JSON, the double does too.
TEST(MemoryStore, NormalizesJsonLikeSqlite) {
  MemoryStore s;
  RunRecord r = run("r1");
  r.options = {{"x", std::numeric_limits<double>::infinity()}};
  ASSERT_TRUE(s.create_run(r).ok());
  EXPECT_TRUE(s.get_run("r1")->options["x"].is_null());
  ASSERT_TRUE(s.update_run("r1", "failed", "", {{"y", std::nan("")}}).ok());
  EXPECT_TRUE(s.get_run("r1")->summary["y"].is_null());
}

TEST(MemoryStore, StoredRecordsAreCopies) {
  MemoryStore s;
  CandidateRecord c = candidate("c1");
  ASSERT_TRUE(s.put_candidate(c).ok());
  c.source = "changed after the put";
  EXPECT_NE((*s.get_candidate("c1"))->source, c.source);
}

}  // namespace
}  // namespace kf
