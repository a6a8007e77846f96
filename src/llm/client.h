// A client for any OpenAI-compatible chat-completions endpoint (a hosted API, llama.cpp's
// server, vLLM, Ollama), over libcurl.
//
//   ChatClient client(config.settings_for(LlmRole::implementer));
//   Expected<ProbeResult> p = client.probe();          // at start: fails in seconds, not later
//   Expected<ChatReply> r = client.complete({.messages = {{"system", sys}, {"user", prompt}}});
//   if (!r) return r.error();                          // names URL and model, never key/prompt
//   if (r->truncated) ...                               // finish_reason "length": the role decides
//   store(r->request_body, r->response_body);          // verbatim, for the record
//
// Rules (docs/llm.md):
// - One request is POST {base_url}/chat/completions with a JSON body; the key, when set, goes in
//   "Authorization: Bearer". Each attempt is limited to timeout_s (connecting to
//   connect_timeout_s); a reply over max_response_bytes is cut off and is an error.
// - Retried, up to max_retries times after the first attempt: HTTP 429, 500, 502, 503, 504, a
//   timeout, a refused or dropped connection. The wait before retry n (1, 2, ...) is the
//   server's Retry-After in seconds (capped at max_retry_after_s) when it sends one, else a
//   uniform random time in [0, min(max_backoff_s, base_backoff_s * 2^(n-1))] ("full jitter").
// - Not retried, each with its own message: 401/403 (the key is refused), 404 (wrong base URL,
//   or an unknown model when the body says so), 400 and other 4xx (the server's message), a
//   reply that is not JSON, an error object, a reply without choices or without content.
// - finish_reason "length" is not an error: ChatReply::truncated says so.
// - No message holds the key or the prompt; text quoted from a server is cut short, made
//   printable, and any copy of the key in it is masked.
//
// A ChatClient keeps one connection for reuse and is not thread-safe: one per thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llm/config.h"
#include "support/status.h"

namespace kf::llm {

struct ChatMessage {
  std::string role;  // "system", "user", "assistant"
  std::string content;
};

struct ChatRequest {
  std::string model;  // empty: the settings' model
  std::vector<ChatMessage> messages;
  std::optional<double> temperature;
  std::optional<int64_t> max_tokens;
  std::vector<std::string> stop;
  // Sent as the header "X-Kforge-Role" when set (the replay server can match on it; other
  // servers ignore it).
  std::string role_tag;
};

struct ChatReply {
  std::string content;
  std::string finish_reason;  // "stop", "length", ... ("" when the server gave none)
  bool truncated = false;     // finish_reason == "length"
  int64_t prompt_tokens = 0, completion_tokens = 0;
  bool usage_reported = false;              // whether the reply held `usage`
  std::string model;                        // as the server names it ("" when absent)
  double latency_s = 0;                     // the answering attempt
  double elapsed_s = 0;                     // all attempts and the waits between them
  std::string request_body, response_body;  // verbatim
  int attempts = 0;
};

// One HTTP attempt as it happened, for observers (a recorder, a log). No key in it.
struct Attempt {
  int number = 0;  // 1-based
  std::string url;
  long http_status = 0;  // 0: no HTTP answer (timeout, refused, dropped)
  std::string request_body, response_body;
  double latency_s = 0;
  std::string error;  // "" when this attempt answered the call
  bool will_retry = false;
  double wait_s = 0;  // the wait before the next attempt
};

struct ProbeResult {
  std::vector<std::string> models;        // ids the endpoint lists (may be empty)
  bool model_listed = false;              // the configured model is among them
  std::optional<int64_t> context_tokens;  // the configured model's context, when the server says
  double latency_s = 0;
};

struct ClientOptions {
  std::function<void(double seconds)> sleep;       // default: sleeps this thread
  std::function<double()> uniform;                 // in [0, 1), for jitter; default: seeded mt19937
  std::function<void(const Attempt&)> on_attempt;  // called after each attempt
  double base_backoff_s = 1, max_backoff_s = 30, max_retry_after_s = 60;
  size_t max_response_bytes = 8u << 20;
  double probe_timeout_s = 5;  // the probe's connect and total limit
};

class ChatClient {
 public:
  explicit ChatClient(LlmSettings settings, ClientOptions options = {});
  ~ChatClient();
  ChatClient(const ChatClient&) = delete;
  ChatClient& operator=(const ChatClient&) = delete;

  // One chat completion, retried as the header says. Fails on settings that do not validate.
  Expected<ChatReply> complete(const ChatRequest& request);
  // GET {base_url}/models once (no retry, probe_timeout_s): the models listed and the context
  // of the configured one. Fails when the endpoint does not answer, refuses the key, or lists
  // models of which the configured one is not.
  Expected<ProbeResult> probe();

  const LlmSettings& settings() const { return settings_; }

  // How the last complete() failed: the model answered but its reply did not read (not JSON,
  // an error object, no choices or content), or no answer came (an HTTP error, a timeout, the
  // retries spent). The body of a reply that did not read, verbatim ("" otherwise).
  enum class Failure { none, bad_reply, no_answer };
  Failure last_failure() const { return last_failure_; }
  const std::string& last_failed_body() const { return last_failed_body_; }

 private:
  struct Http;
  LlmSettings settings_;
  ClientOptions options_;
  std::unique_ptr<Http> http_;
  Failure last_failure_ = Failure::none;
  std::string last_failed_body_;
};

// The request body complete() sends (exposed for records and tests).
std::string chat_request_body(const ChatRequest& request, const std::string& default_model);

// Fails when `needed` tokens exceed the model's context: the probe's figure when the server gave
// one, else the configured context_tokens; passes when neither is known.
Status check_context(const ProbeResult& probe, const LlmSettings& settings, int64_t needed);

}  // namespace kf::llm
