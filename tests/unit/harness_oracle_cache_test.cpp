// The oracle's answers kept per process (harness/oracle_cache.h): the cache's own bookkeeping,
// and the judge using it on a small golden task. A hit must give the verdicts a fresh oracle
// would: the same errors for the same outputs, and a wrong answer at the bench shape still
// caught when the oracle did not run.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "harness/evaluator.h"
#include "harness/oracle_cache.h"

namespace kf {
namespace {

std::shared_ptr<OracleRecord> record_of(size_t doubles) {
  auto r = std::make_shared<OracleRecord>();
  r->bases = 1;
  r->first = {std::vector<double>(doubles, 1.0)};
  return r;
}

TEST(OracleCache, FindsWhatItKeptAndCountsHitsAndMisses) {
  OracleCache c(1 << 20);
  EXPECT_EQ(c.find("a"), nullptr);
  c.put("a", record_of(100));
  auto hit = c.find("a");
  ASSERT_NE(hit, nullptr);
  EXPECT_EQ(hit->first[0].size(), 100u);
  EXPECT_EQ(c.hits(), 1u);
  EXPECT_EQ(c.misses(), 1u);
  EXPECT_GE(c.bytes(), 100 * sizeof(double));
}

TEST(OracleCache, DropsTheLeastRecentlyUsedToStayWithinItsCapacity) {
  OracleCache c(32 << 10);  // 32 KiB: four records of 1000 doubles (~8 KiB each) fit
  for (const char* k : {"a", "b", "c", "d", "e"}) c.put(k, record_of(1000));
  EXPECT_LE(c.bytes(), c.capacity());
  EXPECT_EQ(c.find("a"), nullptr);  // the oldest went first
  ASSERT_NE(c.find("b"), nullptr);  // now the most recently used
  c.put("f", record_of(1000));
  EXPECT_NE(c.find("b"), nullptr);
  EXPECT_EQ(c.find("c"), nullptr);  // the least recently used went
  for (const char* k : {"d", "e", "f"}) EXPECT_NE(c.find(k), nullptr) << k;
}

TEST(OracleCache, KeepsNothingLargerThanAQuarterOfItsCapacity) {
  OracleCache c(64 << 10);
  c.put("big", record_of(3000));  // ~24 KiB > 16 KiB
  EXPECT_EQ(c.find("big"), nullptr);
  EXPECT_EQ(c.bytes(), 0u);
  OracleCache off(0);
  off.put("a", record_of(1));
  EXPECT_EQ(off.find("a"), nullptr);
}

Task golden_task() {
  auto task =
      load_task(std::filesystem::path(KFORGE_TEST_SOURCE_DIR) / "tests/golden/tasks/f64_layernorm");
  KF_CHECK(task) << task.error().message();
  return *task;
}

TEST(OracleCache, KeyHoldsTheSeedsTheShapeTheOracleAndTheDistributions) {
  Task task = golden_task();
  auto inst = task.instantiate(task.bench);
  ASSERT_TRUE(inst);
  const std::string k = oracle_cache_key(task, *inst, "oracle", 2, 7, {9});
  EXPECT_EQ(k, oracle_cache_key(task, *inst, "oracle", 2, 7, {9}));
  EXPECT_NE(k, oracle_cache_key(task, *inst, "oracle", 2, 8, {9}));
  EXPECT_NE(k, oracle_cache_key(task, *inst, "oracle", 2, 7, {10}));
  EXPECT_NE(k, oracle_cache_key(task, *inst, "oracle", 3, 7, {9}));
  EXPECT_NE(k, oracle_cache_key(task, *inst, "other", 2, 7, {9}));
  auto small = task.instantiate(task.tests.back());
  ASSERT_TRUE(small);
  EXPECT_NE(k, oracle_cache_key(task, *small, "oracle", 2, 7, {9}));
  task.inputs[0].dist.b *= 2;  // another input distribution: other inputs from the same seed
  EXPECT_NE(k, oracle_cache_key(task, *inst, "oracle", 2, 7, {9}));
}

EvalOptions judge_options(uint64_t seed) {
  EvalOptions o;
  o.seed = seed;
  o.time_reference = false;
  o.min_time_s = 0.02;
  o.min_samples = 3;
  return o;
}

const CheckRecord* bench_check(const RunResult& r) {
  for (const auto& c : r.checks)
    if (c.shape == r.shape && !c.timed) return &c;
  return nullptr;
}

TEST(OracleCache, TheJudgeReusesTheAnswersForTheSameSeedAndStillCatchesAWrongAnswer) {
  const Task task = golden_task();
  OracleCache& cache = OracleCache::process();
  ASSERT_GT(cache.capacity(), 0u) << "KFORGE_ORACLE_CACHE_MB turned the cache off";
  const uint64_t seed = 0x0c1e5eedull;
  const size_t hits0 = cache.hits();
  auto first = evaluate(task, task.reference_source, judge_options(seed));
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_EQ(first->verdict, Verdict::ok) << first->message;
  EXPECT_EQ(cache.hits(), hits0);  // the first evaluation at this seed ran the oracle

  std::vector<std::string> notes;
  EvalOptions again = judge_options(seed);
  again.progress = [&](const std::string& s) { notes.push_back(s); };
  auto second = evaluate(task, task.reference_source, again);
  ASSERT_TRUE(second) << second.error().message();
  ASSERT_EQ(second->verdict, Verdict::ok) << second->message;
  EXPECT_EQ(cache.hits(), hits0 + 1);
  bool said = false, ran = false;
  for (const auto& n : notes) {
    said |= n.find("answers at the bench shape are known") != std::string::npos;
    ran |= n.find("running the f64 oracle") != std::string::npos;
  }
  EXPECT_TRUE(said);
  EXPECT_FALSE(ran);
  // The same deterministic kernel on the same inputs: the same errors, to the last bit.
  const auto* a = bench_check(*first);
  const auto* b = bench_check(*second);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(a->rel_l2, b->rel_l2);
  EXPECT_EQ(a->max_abs_err, b->max_abs_err);

  // Wrong only at the bench shape (the test shapes are small), judged on the cached answers.
  std::string wrong = task.reference_source;
  const std::string end = "y[n * D + d] = T((A(x[n * D + d]) - mu) * r * A(g[d]));\n  }\n";
  const size_t at = wrong.find(end);
  ASSERT_NE(at, std::string::npos);
  wrong.insert(at + end.size(), "  if (N * D >= 4096) y[(N * D) / 3] += T(1);\n");
  auto bad = evaluate(task, wrong, judge_options(seed));
  ASSERT_TRUE(bad) << bad.error().message();
  EXPECT_EQ(bad->verdict, Verdict::wrong_answer) << bad->message;
  EXPECT_EQ(cache.hits(), hits0 + 2);

  // Another seed draws other inputs: the oracle runs again.
  auto other = evaluate(task, task.reference_source, judge_options(seed + 1));
  ASSERT_TRUE(other) << other.error().message();
  EXPECT_EQ(other->verdict, Verdict::ok) << other->message;
  EXPECT_EQ(cache.hits(), hits0 + 2);
}

}  // namespace
}  // namespace kf
