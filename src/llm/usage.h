// Tokens and cost of a run's LLM calls, per call, per role and in all, against a budget that a
// run checks before each call so it stops cleanly when the budget is spent.
//
//   UsageMeter meter(config.prices, {.max_tokens = 200000, .max_cost = 2.0});
//   KF_RETURN_IF_ERROR(meter.can_price(model));      // at start, when a cost budget is set
//   if (Status s = meter.check_budget(); !s) stop(s);  // before each call
//   CallUsage u = meter.add("planner", model, reply.prompt_tokens, reply.completion_tokens);
//   meter.total().cost; meter.for_role("planner").tokens(); meter.remaining().cost;
//
// Cost = prompt_tokens * input + completion_tokens * output, prices in US dollars per million
// tokens, looked up by the model's exact name, else the "*" entry; a model with neither costs 0
// and is counted as unpriced (can_price refuses it when max_cost is set). The budget is checked
// between calls: a call that starts under the budget may end past it, and the next check stops.
// A run that resumes adds its recorded calls again first. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "llm/config.h"
#include "support/status.h"

namespace kf::llm {

struct Budget {
  std::optional<int64_t> max_tokens;  // prompt + completion, all roles
  std::optional<double> max_cost;     // US dollars
};

struct UsageTotals {
  int64_t calls = 0;
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double cost = 0;
  int64_t unpriced_calls = 0;  // calls whose model had no price (counted at cost 0)
  int64_t tokens() const { return prompt_tokens + completion_tokens; }
};

struct CallUsage {
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double cost = 0;
  bool priced = false;
};

struct Remaining {
  std::optional<int64_t> tokens;  // nullopt: no token limit; never negative
  std::optional<double> cost;     // nullopt: no cost limit; never negative
};

class UsageMeter {
 public:
  explicit UsageMeter(std::map<std::string, ModelPrice> prices = {}, Budget budget = {});

  // Counts one call (negative counts are taken as 0) and returns its cost.
  CallUsage add(std::string_view role, std::string_view model, int64_t prompt_tokens,
                int64_t completion_tokens);

  UsageTotals total() const;
  UsageTotals for_role(std::string_view role) const;  // zeros for a role with no calls
  std::map<std::string, UsageTotals> by_role() const;

  // The price of `model` (exact name, else "*"); nullopt when neither is listed.
  std::optional<ModelPrice> price_of(std::string_view model) const;
  // Fails when a cost budget is set and `model` has no price: the budget could not be kept.
  Status can_price(std::string_view model) const;

  const Budget& budget() const { return budget_; }
  bool exhausted() const;
  Remaining remaining() const;
  // Fails, saying which limit was reached and the totals, once the budget is spent.
  Status check_budget() const;

 private:
  std::map<std::string, ModelPrice, std::less<>> prices_;
  Budget budget_;
  mutable std::mutex mu_;
  UsageTotals total_;
  std::map<std::string, UsageTotals, std::less<>> roles_;
};

}  // namespace kf::llm
