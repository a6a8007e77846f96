// A transcript: the scripted or recorded answers the replay server (replay_server.h) gives to
// OpenAI-compatible requests, one exchange per request, normal replies and faults alike.
//
//   {
//     "models": ["coder"],                 // what GET /models lists (default: none)
//     "context_length": 32768,             // reported for each listed model (optional)
//     "exchanges": [
//       {"status": 429, "retry_after": "2"},                      // a fault, then
//       {"role": "planner", "match": "## Task",                   // conditions (optional)
//        "content": "## Analysis ...", "prompt_tokens": 900, "completion_tokens": 120},
//       {"body": "{not json"},                                    // a verbatim body
//       {"delay_s": 5, "content": "late"},                        // answers after 5 s
//       {"drop": true}                                            // closes the connection
//     ]
//   }
//
//   Expected<Transcript> t = read_transcript("faults.json");
//
// Exchange keys (all optional): match (a substring the request's last user message must
// hold), role (the request's X-Kforge-Role header must equal it), delay_s (seconds before
// answering, up to 600), status (HTTP status, default 200), retry_after (the Retry-After header,
// a string or a number), body (sent verbatim instead of a built reply), drop (send the headers,
// then close the connection mid-body), content, finish_reason (default "stop"), prompt_tokens
// and completion_tokens (default: a quarter of the characters, rounded up), model (default: the
// request's). A non-200 status without a body gets {"error": {"message": ...}}.
//
// A request takes the first exchange not yet used whose conditions it meets: without
// conditions, exchanges answer in file order. The file is untrusted: at most 64 MiB, nested at
// most 128 deep, only the keys above, each of its type; errors name the file, the exchange's
// index and the key.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace kf::llm {

struct Exchange {
  std::string match;  // "": any request
  std::string role;   // "": any role
  double delay_s = 0;
  int status = 200;
  std::string retry_after;          // "": no header
  std::optional<std::string> body;  // verbatim; else built from the fields below
  bool drop = false;
  std::string content;
  std::string finish_reason = "stop";
  std::optional<int64_t> prompt_tokens, completion_tokens;
  std::string model;
};

struct Transcript {
  std::vector<std::string> models;
  std::optional<int64_t> context_length;
  std::vector<Exchange> exchanges;
};

inline constexpr size_t kMaxTranscriptBytes = 64u << 20;
inline constexpr double kMaxExchangeDelayS = 600;

Expected<Transcript> read_transcript(const std::filesystem::path& file);
// The same from text (`name` names it in errors).
Expected<Transcript> parse_transcript(std::string_view text, const std::string& name);

// Whether `e`'s conditions hold for a request with this last user message and role tag.
bool exchange_matches(const Exchange& e, std::string_view last_user_message,
                      std::string_view role_tag);

// The body `e` answers `request` (a chat-completions request object) with: `e.body` verbatim, an
// error object for a non-200 status, else a chat.completion built from e's fields. `id`
// distinguishes replies.
std::string exchange_body(const Exchange& e, const nlohmann::json& request, int id);

// The request's last message with role "user" whose content is a string ("" when none).
std::string last_user_message(const nlohmann::json& request);

}  // namespace kf::llm
