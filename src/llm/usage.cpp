#include "llm/usage.h"

#include <fmt/format.h>

#include <algorithm>

namespace kf::llm {

UsageMeter::UsageMeter(std::map<std::string, ModelPrice> prices, Budget budget)
    : prices_(prices.begin(), prices.end()), budget_(budget) {}

std::optional<ModelPrice> UsageMeter::price_of(std::string_view model) const {
  if (auto it = prices_.find(model); it != prices_.end()) return it->second;
  if (auto it = prices_.find("*"); it != prices_.end()) return it->second;
  return std::nullopt;
}

Status UsageMeter::can_price(std::string_view model) const {
  if (!budget_.max_cost || price_of(model)) return ok_status();
  return Status::error(fmt::format(
      "a cost budget is set but model {} has no price: add [llm.prices.\"{}\"] (input, output "
      "in US dollars per million tokens) or [llm.prices.\"*\"]",
      model, model));
}

CallUsage UsageMeter::add(std::string_view role, std::string_view model, int64_t prompt_tokens,
                          int64_t completion_tokens) {
  CallUsage u{.prompt_tokens = std::max<int64_t>(0, prompt_tokens),
              .completion_tokens = std::max<int64_t>(0, completion_tokens)};
  if (const auto p = price_of(model)) {
    u.priced = true;
    u.cost = (static_cast<double>(u.prompt_tokens) * p->input_per_mtok +
              static_cast<double>(u.completion_tokens) * p->output_per_mtok) /
             1e6;
  }
  const std::lock_guard lock(mu_);
  auto it = roles_.find(role);
  if (it == roles_.end()) it = roles_.emplace(std::string(role), UsageTotals{}).first;
  for (UsageTotals* t : {&total_, &it->second}) {
    t->calls += 1;
    t->prompt_tokens += u.prompt_tokens;
    t->completion_tokens += u.completion_tokens;
    t->cost += u.cost;
    if (!u.priced) t->unpriced_calls += 1;
  }
  return u;
}

UsageTotals UsageMeter::total() const {
  const std::lock_guard lock(mu_);
  return total_;
}

UsageTotals UsageMeter::for_role(std::string_view role) const {
  const std::lock_guard lock(mu_);
  auto it = roles_.find(role);
  return it == roles_.end() ? UsageTotals{} : it->second;
}

std::map<std::string, UsageTotals> UsageMeter::by_role() const {
  const std::lock_guard lock(mu_);
  return {roles_.begin(), roles_.end()};
}

Remaining UsageMeter::remaining() const {
  const UsageTotals t = total();
  Remaining r;
  if (budget_.max_tokens) r.tokens = std::max<int64_t>(0, *budget_.max_tokens - t.tokens());
  if (budget_.max_cost) r.cost = std::max(0.0, *budget_.max_cost - t.cost);
  return r;
}

bool UsageMeter::exhausted() const {
  const Remaining r = remaining();
  return (r.tokens && *r.tokens <= 0) || (r.cost && *r.cost <= 0);
}

Status UsageMeter::check_budget() const {
  const UsageTotals t = total();
  const Remaining r = remaining();
  if (r.tokens && *r.tokens <= 0)
    return Status::error(
        fmt::format("the run reached its token budget: {} tokens used of {} ({} "
                    "calls, ${:.4f})",
                    t.tokens(), *budget_.max_tokens, t.calls, t.cost));
  if (r.cost && *r.cost <= 0)
    return Status::error(
        fmt::format("the run reached its cost budget: ${:.4f} spent of ${:.4f} "
                    "({} calls, {} tokens)",
                    t.cost, *budget_.max_cost, t.calls, t.tokens()));
  return ok_status();
}

}  // namespace kf::llm
