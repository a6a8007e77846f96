// Token and cost accounting (llm/usage.h): costs from per-model prices, totals per role and per
// run, and a budget that stops a run once spent.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "llm/usage.h"

namespace kf::llm {
namespace {

using ::testing::HasSubstr;

const std::map<std::string, ModelPrice> kPrices = {{"big", {2.5, 10.0}}, {"small", {0.1, 0.4}}};

TEST(LlmUsage, CostsSumPerCallPerRoleAndPerRun) {
  UsageMeter m(kPrices);
  const CallUsage a = m.add("planner", "big", 1'000'000, 100'000);  // 2.5 + 1.0
  EXPECT_TRUE(a.priced);
  EXPECT_DOUBLE_EQ(a.cost, 3.5);
  const CallUsage b = m.add("implementer", "small", 2'000'000, 500'000);  // 0.2 + 0.2
  EXPECT_DOUBLE_EQ(b.cost, 0.4);
  m.add("planner", "small", 0, 1'000'000);  // 0.4
  const UsageTotals t = m.total();
  EXPECT_EQ(t.calls, 3);
  EXPECT_EQ(t.prompt_tokens, 3'000'000);
  EXPECT_EQ(t.completion_tokens, 1'600'000);
  EXPECT_EQ(t.tokens(), 4'600'000);
  EXPECT_DOUBLE_EQ(t.cost, 4.3);
  EXPECT_EQ(t.unpriced_calls, 0);
  const UsageTotals planner = m.for_role("planner");
  EXPECT_EQ(planner.calls, 2);
  EXPECT_DOUBLE_EQ(planner.cost, 3.9);
  EXPECT_EQ(m.for_role("debugger").calls, 0);
  EXPECT_EQ(m.by_role().size(), 2u);
}

TEST(LlmUsage, AnUnpricedModelCostsNothingButIsCountedAndTheWildcardPricesOthers) {
  UsageMeter m(kPrices);
  const CallUsage u = m.add("debugger", "mystery", 1000, 1000);
  EXPECT_FALSE(u.priced);
  EXPECT_EQ(u.cost, 0);
  EXPECT_EQ(m.total().unpriced_calls, 1);
  EXPECT_TRUE(m.can_price("mystery")) << "no cost budget: nothing to keep";
  UsageMeter capped(kPrices, {.max_cost = 1.0});
  const Status s = capped.can_price("mystery");
  EXPECT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("model mystery has no price"));
  auto wild = kPrices;
  wild["*"] = {1.0, 1.0};
  UsageMeter w(wild, {.max_cost = 1.0});
  EXPECT_TRUE(w.can_price("mystery"));
  EXPECT_DOUBLE_EQ(w.add("planner", "mystery", 500'000, 500'000).cost, 1.0);
  EXPECT_DOUBLE_EQ(w.add("planner", "big", 1'000'000, 0).cost, 2.5) << "exact name first";
  EXPECT_EQ(m.add("x", "big", -5, -7).prompt_tokens, 0) << "negative counts are 0";
}

TEST(LlmUsage, ATokenBudgetIsReachedBetweenCalls) {
  UsageMeter m(kPrices, {.max_tokens = 10'000});
  EXPECT_FALSE(m.exhausted());
  EXPECT_EQ(m.remaining().tokens, 10'000);
  EXPECT_FALSE(m.remaining().cost);
  m.add("planner", "big", 6000, 1000);
  EXPECT_TRUE(m.check_budget());
  EXPECT_EQ(m.remaining().tokens, 3000);
  m.add("implementer", "big", 3000, 2000);  // starts under the budget, ends past it
  EXPECT_TRUE(m.exhausted());
  EXPECT_EQ(m.remaining().tokens, 0) << "never negative";
  const Status s = m.check_budget();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.message(), HasSubstr("token budget: 12000 tokens used of 10000 (2 calls"));
}

TEST(LlmUsage, ACostBudgetIsReachedBetweenCalls) {
  UsageMeter m(kPrices, {.max_cost = 5.0});
  m.add("planner", "big", 1'000'000, 100'000);  // 3.5
  EXPECT_FALSE(m.exhausted());
  EXPECT_DOUBLE_EQ(*m.remaining().cost, 1.5);
  m.add("planner", "big", 600'000, 0);  // 1.5: exactly at the budget
  EXPECT_TRUE(m.exhausted());
  EXPECT_THAT(m.check_budget().message(), HasSubstr("cost budget: $5.0000 spent of $5.0000"));
  UsageMeter none(kPrices);
  none.add("planner", "big", 1'000'000'000, 1'000'000'000);
  EXPECT_FALSE(none.exhausted()) << "no budget: never exhausted";
}

TEST(LlmUsage, CallsFromSeveralThreadsAllCount) {
  UsageMeter m(kPrices);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&m] {
      for (int i = 0; i < 1000; ++i) m.add("implementer", "small", 10, 1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(m.total().calls, 4000);
  EXPECT_EQ(m.total().tokens(), 44'000);
}

}  // namespace
}  // namespace kf::llm
