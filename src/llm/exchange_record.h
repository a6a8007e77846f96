// One call of a run's LLM role to a model, as it is recorded: the bodies verbatim (never the key,
// which travels in a header), what it cost and how long it took. The LLM brain's session makes
// them; the store keeps them under the run (store/store.h LlmExchangeRecord adds run and seq).
//
// A failed call is one of two kinds, told apart by `response`:
//   - the model answered, but its reply did not read (not JSON, no choices, no content):
//     `response` holds the body, and a resumed run answers the same failure again;
//   - no answer came (refused key, unknown model, retries spent on 429/5xx/timeouts):
//     `response` is "", the run stopped there, and a resumed run asks the model again.
#pragma once

#include <cstdint>
#include <string>

namespace kf::llm {

struct ExchangeRecord {
  std::string role;  // "planner", "implementer", "debugger"
  std::string model;
  std::string request, response;  // verbatim HTTP bodies (response "" when none came)
  int64_t prompt_tokens = 0, completion_tokens = 0;
  double latency_s = 0;  // all attempts and the waits between them
  double cost = 0;       // US dollars (0 when the model has no price)
  int attempts = 0;
  std::string error;  // "" when the model answered

  // A failed call without any reply: the model was never heard (see above).
  bool unanswered() const { return !error.empty() && response.empty(); }
};

}  // namespace kf::llm
