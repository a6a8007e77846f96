// The Store contract (store.h): every implementation runs this same suite. A new store is
// added to `StoreKinds` below and is tested the moment it is listed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <thread>

#include "store/memory_store.h"
#include "store/sqlite_store.h"
#include "support/fs.h"
#include "unit/store_test_util.h"

namespace kf {
namespace {

using namespace store_test;
using json = nlohmann::json;

struct SqliteKind {
  static constexpr const char* name = "Sqlite";
  TempDir dir{"kforge-store-contract"};
  std::unique_ptr<Store> make() {
    auto s = SqliteStore::open(dir.path() / "runs.db");
    KF_CHECK(s.has_value()) << s.error().message();
    return std::move(*s);
  }
};

struct MemoryKind {
  static constexpr const char* name = "Memory";
  std::unique_ptr<Store> make() { return std::make_unique<MemoryStore>(); }
};

template <typename Kind>
class StoreContract : public ::testing::Test {
 protected:
  Store& s() { return *store_; }

  // A run and a candidate that most tests attach attempts to.
  void seed() {
    ASSERT_TRUE(s().create_run(run("r1")).ok());
    ASSERT_TRUE(s().put_candidate(candidate("c1")).ok());
  }

  Kind kind_;
  std::unique_ptr<Store> store_ = kind_.make();
};

struct KindName {
  template <typename Kind>
  static std::string GetName(int) {
    return Kind::name;
  }
};

using StoreKinds = ::testing::Types<SqliteKind, MemoryKind>;
TYPED_TEST_SUITE(StoreContract, StoreKinds, KindName);

TYPED_TEST(StoreContract, RunRoundTrips) {
  RunRecord r = run("r1", "2026-03-04T05:06:07.890Z");
  r.best_candidate = "c9";
  r.summary = {{"best_speedup", 3.5}, {"notes", {"a", "b"}}};
  ASSERT_TRUE(this->s().create_run(r).ok());
  auto got = this->s().get_run("r1");
  ASSERT_TRUE(got) << got.error().message();
  EXPECT_EQ(got->to_json(), r.to_json());
}

TYPED_TEST(StoreContract, CreateRunFillsTimestamps) {
  ASSERT_TRUE(this->s().create_run(run("r1")).ok());
  auto got = this->s().get_run("r1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->created_at.size(), std::string("2026-01-02T03:04:05.006Z").size());
  EXPECT_EQ(got->created_at.back(), 'Z');
  EXPECT_EQ(got->updated_at, got->created_at);
}

TYPED_TEST(StoreContract, RunErrors) {
  ASSERT_TRUE(this->s().create_run(run("r1")).ok());
  Status dup = this->s().create_run(run("r1"));
  EXPECT_FALSE(dup.ok());
  EXPECT_NE(dup.message().find("run 'r1' already exists"), std::string::npos) << dup.message();
  EXPECT_FALSE(this->s().create_run(run("")).ok());
  auto missing = this->s().get_run("nope");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("no run 'nope'"), std::string::npos);
  Status upd = this->s().update_run("nope", "finished", "", json::object());
  EXPECT_NE(upd.message().find("no run 'nope'"), std::string::npos) << upd.message();
}

TYPED_TEST(StoreContract, ListRunsNewestFirstLaterInsertionWinsTies) {
  auto empty = this->s().list_runs();
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  ASSERT_TRUE(this->s().create_run(run("b", "2026-01-02T00:00:00.000Z")).ok());
  ASSERT_TRUE(this->s().create_run(run("c", "2026-01-03T00:00:00.000Z")).ok());
  ASSERT_TRUE(this->s().create_run(run("a", "2026-01-01T00:00:00.000Z")).ok());
  ASSERT_TRUE(this->s().create_run(run("c2", "2026-01-03T00:00:00.000Z")).ok());
  auto runs = this->s().list_runs();
  ASSERT_TRUE(runs);
  std::vector<std::string> ids;
  for (const auto& r : *runs) ids.push_back(r.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"c2", "c", "b", "a"}));
}

TYPED_TEST(StoreContract, UpdateRunChangesStateBestSummaryAndTime) {
  RunRecord r = run("r1", "2020-01-01T00:00:00.000Z");
  ASSERT_TRUE(this->s().create_run(r).ok());
  json summary = {{"best_speedup", 4.0}, {"attempts", 12}};
  ASSERT_TRUE(this->s().update_run("r1", "finished", "c7", summary).ok());
  auto got = this->s().get_run("r1");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->state, "finished");
  EXPECT_EQ(got->best_candidate, "c7");
  EXPECT_EQ(got->summary, summary);
  EXPECT_GT(got->updated_at, r.updated_at);
  EXPECT_EQ(got->created_at, r.created_at);
  EXPECT_EQ(got->options, r.options);
  EXPECT_EQ(got->task_name, r.task_name);
}

TYPED_TEST(StoreContract, CandidateRoundTripsAndPutIsIdempotent) {
  CandidateRecord c = candidate("c1");
  ASSERT_TRUE(this->s().put_candidate(c).ok());
  ASSERT_TRUE(this->s().put_candidate(c).ok());
  ASSERT_TRUE(this->s().put_candidate(candidate("c1", "int other;")).ok());  // first write wins
  auto got = this->s().get_candidate("c1");
  ASSERT_TRUE(got);
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->to_json(), c.to_json());
  auto none = this->s().get_candidate("c2");
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(this->s().put_candidate(candidate("")).ok());
}

TYPED_TEST(StoreContract, RecordEvaluationStoresBothRows) {
  this->seed();
  EvaluationRecord e = evaluation("c1");
  AttemptRecord a = attempt("r1", 1, "", "");  // keys filled from the evaluation
  ASSERT_TRUE(this->s().record_evaluation(e, a).ok());
  auto found = this->s().find_evaluation(e.key);
  ASSERT_TRUE(found);
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ((*found)->to_json(), e.to_json());
  auto attempts = this->s().attempts("r1");
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->size(), 1u);
  a.candidate_key = "c1";
  a.evaluation_key = e.key;
  EXPECT_EQ((*attempts)[0].to_json(), a.to_json());
  EXPECT_EQ(*this->s().count_evaluations(), 1);
  auto miss = this->s().find_evaluation("other");
  ASSERT_TRUE(miss);
  EXPECT_FALSE(miss->has_value());
}

TYPED_TEST(StoreContract, NanTimesRoundTrip) {
  this->seed();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EvaluationRecord e = evaluation("c1", 4, nan);
  e.verdict = "compile_error";
  AttemptRecord a = attempt("r1", 1, "c1", e.key);
  a.median_s = nan;
  a.speedup = nan;
  ASSERT_TRUE(this->s().record_evaluation(e, a).ok());
  auto found = this->s().find_evaluation(e.key);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_TRUE(std::isnan((*found)->median_s));
  EXPECT_TRUE(std::isnan((*found)->min_s));
  auto attempts = this->s().attempts("r1");
  ASSERT_TRUE(attempts && attempts->size() == 1);
  EXPECT_TRUE(std::isnan((*attempts)[0].median_s));
  EXPECT_TRUE(std::isnan((*attempts)[0].speedup));
}

// Documented choice: the first measurement of a key wins and the attempt is still recorded.
TYPED_TEST(StoreContract, SameEvaluationKeyTwiceKeepsOneRowAndAddsTheAttempt) {
  this->seed();
  EvaluationRecord first = evaluation("c1", 4, 1.0e-3);
  EvaluationRecord second = evaluation("c1", 4, 9.0e-3);
  ASSERT_EQ(first.key, second.key);
  ASSERT_TRUE(this->s().record_evaluation(first, attempt("r1", 1, "c1", first.key)).ok());
  ASSERT_TRUE(this->s().record_evaluation(second, attempt("r1", 2, "c1", second.key)).ok());
  EXPECT_EQ(*this->s().count_evaluations(), 1);
  auto found = this->s().find_evaluation(first.key);
  ASSERT_TRUE(found && found->has_value());
  EXPECT_DOUBLE_EQ((*found)->median_s, 1.0e-3);
  EXPECT_EQ(this->s().attempts("r1")->size(), 2u);
}

// A failed record_evaluation writes nothing: neither the evaluation nor the attempt.
TYPED_TEST(StoreContract, RecordEvaluationIsAllOrNothing) {
  this->seed();
  EvaluationRecord e1 = evaluation("c1", 1);
  ASSERT_TRUE(this->s().record_evaluation(e1, attempt("r1", 1, "c1", e1.key)).ok());
  EvaluationRecord e2 = evaluation("c1", 2);
  Status dup_seq = this->s().record_evaluation(e2, attempt("r1", 1, "c1", e2.key));
  EXPECT_NE(dup_seq.message().find("attempt (run 'r1', seq 1) already exists"), std::string::npos)
      << dup_seq.message();
  EXPECT_FALSE(this->s().find_evaluation(e2.key)->has_value());

  Status no_run = this->s().record_evaluation(e2, attempt("r9", 1, "c1", e2.key));
  EXPECT_NE(no_run.message().find("no run 'r9'"), std::string::npos) << no_run.message();
  EvaluationRecord orphan = evaluation("c9");
  Status no_cand = this->s().record_evaluation(orphan, attempt("r1", 2, "", ""));
  EXPECT_NE(no_cand.message().find("no candidate 'c9'"), std::string::npos) << no_cand.message();
  Status mismatch = this->s().record_evaluation(e2, attempt("r1", 2, "c1", e1.key));
  EXPECT_NE(mismatch.message().find("evaluation_key"), std::string::npos) << mismatch.message();

  EXPECT_EQ(*this->s().count_evaluations(), 1);
  EXPECT_EQ(this->s().attempts("r1")->size(), 1u);
  EXPECT_TRUE(this->s().attempts("r9")->empty());
}

TYPED_TEST(StoreContract, PutAttemptWithReusedOrNoEvaluation) {
  this->seed();
  EvaluationRecord e = evaluation("c1");
  ASSERT_TRUE(this->s().record_evaluation(e, attempt("r1", 1, "c1", e.key)).ok());
  ASSERT_TRUE(this->s().put_attempt(attempt("r1", 2, "c1", e.key)).ok());  // reused
  AttemptRecord refused = attempt("r1", 3, "", "");                        // nothing to judge
  refused.verdict = "compile_error";
  ASSERT_TRUE(this->s().put_attempt(refused).ok());
  auto attempts = this->s().attempts("r1");
  ASSERT_TRUE(attempts && attempts->size() == 3);
  EXPECT_EQ((*attempts)[1].evaluation_key, e.key);
  EXPECT_EQ((*attempts)[2].to_json(), refused.to_json());
  EXPECT_EQ(*this->s().count_evaluations(), 1);

  Status no_eval = this->s().put_attempt(attempt("r1", 4, "c1", "e-missing"));
  EXPECT_NE(no_eval.message().find("no evaluation 'e-missing'"), std::string::npos)
      << no_eval.message();
  Status no_cand = this->s().put_attempt(attempt("r1", 4, "c-missing", ""));
  EXPECT_NE(no_cand.message().find("no candidate 'c-missing'"), std::string::npos);
  Status dup = this->s().put_attempt(attempt("r1", 2, "", ""));
  EXPECT_NE(dup.message().find("already exists"), std::string::npos) << dup.message();
  Status no_run = this->s().put_attempt(attempt("r2", 1, "", ""));
  EXPECT_NE(no_run.message().find("no run 'r2'"), std::string::npos);
  EXPECT_EQ(this->s().attempts("r1")->size(), 3u);
}

TYPED_TEST(StoreContract, AttemptsAreInSeqOrderPerRun) {
  this->seed();
  ASSERT_TRUE(this->s().create_run(run("r10")).ok());  // a prefix of r1 must not mix in
  EXPECT_EQ(*this->s().next_attempt_seq("r1"), 1);
  for (int seq : {3, 1, 2}) ASSERT_TRUE(this->s().put_attempt(attempt("r1", seq, "", "")).ok());
  ASSERT_TRUE(this->s().put_attempt(attempt("r10", 7, "", "")).ok());
  auto attempts = this->s().attempts("r1");
  ASSERT_TRUE(attempts);
  ASSERT_EQ(attempts->size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ((*attempts)[static_cast<size_t>(i)].seq, i + 1);
  EXPECT_EQ(*this->s().next_attempt_seq("r1"), 4);
  EXPECT_EQ(*this->s().next_attempt_seq("r10"), 8);
  EXPECT_EQ(*this->s().next_attempt_seq("unknown"), 1);
  EXPECT_TRUE(this->s().attempts("unknown")->empty());
}

TYPED_TEST(StoreContract, MessagesRoundTripInOrder) {
  this->seed();
  EXPECT_EQ(*this->s().next_message_seq("r1"), 1);
  MessageRecord plan = message("r1", 2, "Plan");
  plan.body = {{"steps", {"tile i by 32", "vectorize j"}}, {"rationale", "cache reuse"}};
  ASSERT_TRUE(this->s().put_message(plan).ok());
  ASSERT_TRUE(this->s().put_message(message("r1", 1, "Diagnostics")).ok());
  auto msgs = this->s().messages("r1");
  ASSERT_TRUE(msgs);
  ASSERT_EQ(msgs->size(), 2u);
  EXPECT_EQ((*msgs)[0].type, "Diagnostics");
  EXPECT_EQ((*msgs)[1].to_json(), plan.to_json());
  EXPECT_EQ(*this->s().next_message_seq("r1"), 3);
  Status dup = this->s().put_message(message("r1", 2, "Plan"));
  EXPECT_NE(dup.message().find("message (run 'r1', seq 2) already exists"), std::string::npos)
      << dup.message();
  Status no_run = this->s().put_message(message("r2", 1, "Plan"));
  EXPECT_NE(no_run.message().find("no run 'r2'"), std::string::npos);
  EXPECT_EQ(this->s().messages("r1")->size(), 2u);
}

// LLM exchanges are kept verbatim (bytes included), in seq order, per run, never overwritten.
TYPED_TEST(StoreContract, LlmExchangesRoundTripVerbatimInOrder) {
  this->seed();
  EXPECT_EQ(*this->s().next_llm_exchange_seq("r1"), 1);
  LlmExchangeRecord e("r1", 2,
                      {.role = "implementer",
                       .model = "coder",
                       .request = R"({"messages":[{"role":"user","content":"## Task"}]})",
                       .response = std::string("{\"choices\": [] \xff}\n"),
                       .prompt_tokens = 1200,
                       .completion_tokens = 340,
                       .latency_s = 1.25,
                       .cost = 0.0042,
                       .attempts = 2,
                       .error = ""});
  LlmExchangeRecord failed("r1", 1, {.role = "planner", .model = "coder"});
  failed.error = "HTTP 500 (gave up after 3 attempts)";
  ASSERT_TRUE(this->s().put_llm_exchange(e).ok());
  ASSERT_TRUE(this->s().put_llm_exchange(failed).ok());
  auto all = this->s().llm_exchanges("r1");
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].role, "planner");
  EXPECT_EQ((*all)[0].error, failed.error);
  EXPECT_FALSE((*all)[0].created_at.empty());
  const LlmExchangeRecord& back = (*all)[1];
  EXPECT_EQ(back.request, e.request);
  EXPECT_EQ(back.response, e.response) << "bytes kept as they came";
  EXPECT_EQ(back.prompt_tokens, 1200);
  EXPECT_EQ(back.completion_tokens, 340);
  EXPECT_DOUBLE_EQ(back.latency_s, 1.25);
  EXPECT_DOUBLE_EQ(back.cost, 0.0042);
  EXPECT_EQ(back.attempts, 2);
  EXPECT_EQ(*this->s().next_llm_exchange_seq("r1"), 3);
  EXPECT_EQ(*this->s().next_llm_exchange_seq("unknown"), 1);
  Status dup = this->s().put_llm_exchange(e);
  EXPECT_NE(dup.message().find("llm exchange (run 'r1', seq 2) already exists"), std::string::npos)
      << dup.message();
  LlmExchangeRecord orphan = e;
  orphan.run_id = "r2";
  EXPECT_NE(this->s().put_llm_exchange(orphan).message().find("no run 'r2'"), std::string::npos);
  EXPECT_EQ(this->s().llm_exchanges("r1")->size(), 2u);
  EXPECT_TRUE(this->s().llm_exchanges("unknown")->empty());
  auto j = LlmExchangeRecord::from_json(back.to_json());
  ASSERT_TRUE(j) << j.error().message();
  EXPECT_EQ(j->completion_tokens, 340);
  EXPECT_EQ(j->request, e.request);
}

// JSON comes back as a SQLite round trip gives it: NaN as null, invalid UTF-8 replaced.
TYPED_TEST(StoreContract, JsonIsNormalizedNotRejected) {
  this->seed();
  MessageRecord m = message("r1", 1, "TestReport");
  m.body = {{"nan", std::numeric_limits<double>::quiet_NaN()},
            {"log", std::string("bad \xff byte")}};
  ASSERT_TRUE(this->s().put_message(m).ok());
  auto msgs = this->s().messages("r1");
  ASSERT_TRUE(msgs && msgs->size() == 1);
  EXPECT_TRUE((*msgs)[0].body["nan"].is_null());
  EXPECT_EQ((*msgs)[0].body["log"], "bad \xef\xbf\xbd byte");
}

TYPED_TEST(StoreContract, ConcurrentWritersLoseNothing) {
  this->seed();
  constexpr int kThreads = 4, kEach = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t] {
      std::string id = "t" + std::to_string(t);
      EXPECT_TRUE(this->s().create_run(run(id)).ok());
      for (int i = 1; i <= kEach; ++i) {
        EvaluationRecord e = evaluation("c1", t * 100 + i);
        EXPECT_TRUE(this->s().record_evaluation(e, attempt(id, i, "c1", e.key)).ok());
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(*this->s().count_evaluations(), kThreads * kEach);
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(this->s().attempts("t" + std::to_string(t))->size(), static_cast<size_t>(kEach));
}

}  // namespace
}  // namespace kf
