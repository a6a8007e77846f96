#include "llm/client.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <random>
#include <thread>

#include "llm/http.h"
#include "llm/json_util.h"
#include "support/json_text.h"
#include "support/text_scan.h"

namespace kf::llm {

struct ChatClient::Http {
  HttpSession session;
};

namespace {

constexpr size_t kQuoteBytes = 200;

// Where a message says the call went: the URL without credentials, and the model.
struct Context {
  std::string url;  // display_url of the request's URL
  std::string model;
  const std::string& key;
  std::string where() const { return fmt::format("{} (model {})", url, model); }
  // Text from a server as a message may quote it: any copy of the key masked, short, printable.
  std::string quote(std::string_view text) const {
    std::string s(text);
    if (!key.empty())
      for (size_t p = s.find(key); p != std::string::npos; p = s.find(key, p))
        s.replace(p, key.size(), "[key]");
    return terminal_text(excerpt(s, kQuoteBytes));
  }
};

// Retry-After in its seconds form ("7", "1.5"); nullopt for the HTTP-date form or anything else.
std::optional<double> parse_retry_after(std::string_view v) {
  if (v.empty() || v.size() > 32 || !std::isdigit(static_cast<unsigned char>(v[0])))
    return std::nullopt;
  double d = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), d);
  if (ec != std::errc() || end != v.data() + v.size() || !std::isfinite(d)) return std::nullopt;
  return d;
}

bool retryable(const HttpResponse& r) {
  switch (r.failure) {
    case TransportFailure::none:
      return r.status == 429 || r.status == 500 || r.status == 502 || r.status == 503 ||
             r.status == 504;
    case TransportFailure::timeout:
    case TransportFailure::connect:
    case TransportFailure::dropped:
      return true;
    case TransportFailure::too_large:
    case TransportFailure::other:
      return false;
  }
  return false;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool says_model_not_found(const std::optional<nlohmann::json>& body, const std::string& message) {
  if (body && body->is_object() && body->contains("error") &&
      json_string((*body)["error"], "code") == "model_not_found")
    return true;
  const std::string m = lower(message);
  return m.find("model") != std::string::npos &&
         (m.find("not found") != std::string::npos ||
          m.find("does not exist") != std::string::npos ||
          m.find("not exist") != std::string::npos || m.find("unknown") != std::string::npos);
}

// The message for an HTTP answer that is not a success.
Status http_error(const HttpResponse& r, const Context& c) {
  const auto body = parse_untrusted_json(r.body);
  std::string said = body ? error_message(*body) : "";
  if (said.empty() && !body) said = r.body;
  const std::string server = said.empty() ? "" : ": " + c.quote(said);
  if (r.status == 401 || r.status == 403)
    return Status::error(
        fmt::format("the endpoint refused the key (HTTP {}) at {}: check api_key, api_key_env or "
                    "OPENAI_API_KEY{}",
                    r.status, c.where(), server));
  if ((r.status == 404 || r.status == 400) && says_model_not_found(body, said))
    return Status::error(fmt::format("the endpoint at {} does not serve model {} (HTTP {}){}",
                                     c.url, c.model, r.status, server));
  if (r.status == 404)
    return Status::error(fmt::format(
        "HTTP 404 from {}: a wrong base URL or an unknown model (OpenAI-compatible servers "
        "answer at BASE/chat/completions; BASE usually ends in /v1){}",
        c.where(), server));
  if (r.status == 400)
    return Status::error(
        fmt::format("the endpoint rejected the request (HTTP 400) at {}{}", c.where(), server));
  if (r.status >= 300 && r.status < 400)
    return Status::error(fmt::format(
        "HTTP {} from {}: kforge does not follow redirects; set base_url to the final address",
        r.status, c.where()));
  return Status::error(fmt::format("HTTP {} from {}{}", r.status, c.where(), server));
}

Status transport_error(const HttpResponse& r, const Context& c, double timeout_s,
                       size_t max_bytes) {
  switch (r.failure) {
    case TransportFailure::none:
      return http_error(r, c);
    case TransportFailure::timeout:
      return Status::error(fmt::format("no answer within {} s from {}: {}", timeout_s, c.where(),
                                       c.quote(r.detail)));
    case TransportFailure::connect:
      return Status::error(
          fmt::format("could not connect to {}: {}", c.where(), c.quote(r.detail)));
    case TransportFailure::dropped:
      return Status::error(fmt::format("the connection to {} closed before a whole answer: {}",
                                       c.where(), c.quote(r.detail)));
    case TransportFailure::too_large:
      return Status::error(
          fmt::format("the reply from {} is over {} bytes (stopped)", c.where(), max_bytes));
    case TransportFailure::other:
      return Status::error(fmt::format("{}: {}", c.where(), c.quote(r.detail)));
  }
  return Status::error(c.where());
}

// A 2xx body read as a chat completion.
Expected<ChatReply> read_completion(const std::string& body, const Context& c) {
  const auto j = parse_untrusted_json(body);
  if (!j)
    return Status::error(
        fmt::format("the endpoint's reply is not JSON ({}): '{}'", c.where(), c.quote(body)));
  if (!j->is_object())
    return Status::error(fmt::format("the endpoint's reply is not a JSON object ({})", c.where()));
  if (const std::string e = error_message(*j); !e.empty() && j->contains("error"))
    return Status::error(
        fmt::format("the endpoint answered with an error ({}): {}", c.where(), c.quote(e)));
  const auto choices = j->find("choices");
  if (choices == j->end() || !choices->is_array() || choices->empty() || !(*choices)[0].is_object())
    return Status::error(fmt::format("the endpoint's reply has no choices ({})", c.where()));
  const nlohmann::json& first = (*choices)[0];
  ChatReply r;
  r.finish_reason = json_string(first, "finish_reason");
  r.truncated = r.finish_reason == "length";
  const auto message = first.find("message");
  const bool has_text = message != first.end() && message->is_object() &&
                        message->contains("content") && (*message)["content"].is_string();
  // A model that spent its whole allowance before writing (a reasoning model) sends null
  // content with finish_reason "length": a truncated, empty reply, not a malformed one.
  if (!has_text && !r.truncated)
    return Status::error(
        fmt::format("the endpoint's reply has no message content ({}, "
                    "finish_reason '{}')",
                    c.where(), c.quote(r.finish_reason)));
  if (has_text) r.content = (*message)["content"].get<std::string>();
  if (const auto usage = j->find("usage"); usage != j->end() && usage->is_object()) {
    const auto p = json_count(*usage, "prompt_tokens");
    const auto q = json_count(*usage, "completion_tokens");
    r.usage_reported = p.has_value() || q.has_value();
    r.prompt_tokens = p.value_or(0);
    r.completion_tokens = q.value_or(0);
  }
  r.model = json_string(*j, "model");
  return r;
}

bool header_safe(std::string_view s) {
  return !s.empty() && s.size() <= 64 &&
         std::all_of(s.begin(), s.end(), [](char ch) { return ch > 0x20 && ch < 0x7f; });
}

std::vector<std::string> headers_for(const LlmSettings& s, const std::string& role_tag) {
  // "Expect:" stops curl from waiting for a 100-continue before sending a large body.
  std::vector<std::string> h = {"Content-Type: application/json", "Accept: application/json",
                                "Expect:"};
  if (!s.api_key.empty()) h.push_back("Authorization: Bearer " + s.api_key);
  if (header_safe(role_tag)) h.push_back("X-Kforge-Role: " + role_tag);
  return h;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::string chat_request_body(const ChatRequest& request, const std::string& default_model) {
  nlohmann::json messages = nlohmann::json::array();
  for (const ChatMessage& m : request.messages)
    messages.push_back({{"role", m.role}, {"content", m.content}});
  nlohmann::json body = {{"model", request.model.empty() ? default_model : request.model},
                         {"messages", std::move(messages)}};
  if (request.temperature) body["temperature"] = *request.temperature;
  if (request.max_tokens) body["max_tokens"] = *request.max_tokens;
  if (!request.stop.empty()) body["stop"] = request.stop;
  return dump_json(body);
}

ChatClient::ChatClient(LlmSettings settings, ClientOptions options)
    : settings_(std::move(settings)),
      options_(std::move(options)),
      http_(std::make_unique<Http>()) {
  if (!options_.sleep)
    options_.sleep = [](double s) {
      std::this_thread::sleep_for(std::chrono::duration<double>(s));
    };
  if (!options_.uniform) {
    auto gen = std::make_shared<std::mt19937_64>(std::random_device{}());
    options_.uniform = [gen] { return std::uniform_real_distribution<double>(0, 1)(*gen); };
  }
}

ChatClient::~ChatClient() = default;

Expected<ChatReply> ChatClient::complete(const ChatRequest& request) {
  last_failure_ = Failure::no_answer;  // until an answer reads
  last_failed_body_.clear();
  KF_RETURN_IF_ERROR(settings_.validate());
  const std::string url = settings_.base_url + "/chat/completions";
  const Context ctx{display_url(url), request.model.empty() ? settings_.model : request.model,
                    settings_.api_key};
  const HttpRequest http{.post = true,
                         .url = url,
                         .body = chat_request_body(request, settings_.model),
                         .headers = headers_for(settings_, request.role_tag),
                         .timeout_s = settings_.timeout_s,
                         .connect_timeout_s = settings_.connect_timeout_s,
                         .max_bytes = options_.max_response_bytes};
  const auto start = std::chrono::steady_clock::now();
  const int attempts = settings_.max_retries + 1;
  for (int n = 1;; ++n) {
    const HttpResponse r = http_->session.send(http);
    Attempt a{.number = n,
              .url = ctx.url,
              .http_status = r.status,
              .request_body = http.body,
              .response_body = r.body,
              .latency_s = r.latency_s};
    const bool ok = r.failure == TransportFailure::none && r.status >= 200 && r.status < 300;
    if (ok) {
      auto reply = read_completion(r.body, ctx);
      if (reply) {
        last_failure_ = Failure::none;
        reply->latency_s = r.latency_s;
        reply->elapsed_s = seconds_since(start);
        reply->request_body = http.body;
        reply->response_body = r.body;
        reply->attempts = n;
      } else {
        a.error = reply.error().message();
        last_failure_ = Failure::bad_reply;
        last_failed_body_ = r.body;
      }
      if (options_.on_attempt) options_.on_attempt(a);
      return reply;
    }
    Status error = transport_error(r, ctx, settings_.timeout_s, options_.max_response_bytes);
    a.error = error.message();
    a.will_retry = retryable(r) && n < attempts;
    if (a.will_retry) {
      const auto after = parse_retry_after(r.retry_after);
      const double cap =
          std::min(options_.max_backoff_s, options_.base_backoff_s * std::ldexp(1.0, n - 1));
      a.wait_s = after ? std::min(*after, options_.max_retry_after_s) : options_.uniform() * cap;
    }
    if (options_.on_attempt) options_.on_attempt(a);
    if (!a.will_retry) {
      if (n == 1 || !retryable(r)) return error;
      return Status::error(fmt::format("{} (gave up after {} attempts)", error.message(), n));
    }
    options_.sleep(a.wait_s);
  }
}

Expected<ProbeResult> ChatClient::probe() {
  KF_RETURN_IF_ERROR(settings_.validate());
  const std::string url = settings_.base_url + "/models";
  const Context ctx{display_url(url), settings_.model, settings_.api_key};
  const double limit = std::min(options_.probe_timeout_s, settings_.timeout_s);
  const HttpResponse r =
      http_->session.send({.post = false,
                           .url = url,
                           .headers = headers_for(settings_, ""),
                           .timeout_s = limit,
                           .connect_timeout_s = std::min(limit, settings_.connect_timeout_s),
                           .max_bytes = options_.max_response_bytes});
  if (r.failure != TransportFailure::none || r.status < 200 || r.status >= 300) {
    const Status e = transport_error(r, ctx, limit, options_.max_response_bytes);
    if (r.failure == TransportFailure::none) return e;
    return Status::error("the endpoint does not answer: " + e.message());
  }
  const auto j = parse_untrusted_json(r.body);
  if (!j || !j->is_object() || !j->contains("data") || !(*j)["data"].is_array())
    return Status::error(
        fmt::format("the endpoint's model list is not JSON with a \"data\" array ({}): '{}'",
                    ctx.where(), ctx.quote(r.body)));
  ProbeResult p;
  p.latency_s = r.latency_s;
  for (const nlohmann::json& m : (*j)["data"]) {
    const std::string id = json_string(m, "id");
    if (id.empty()) continue;
    p.models.push_back(id);
    if (id != settings_.model) continue;
    p.model_listed = true;
    for (const char* key : {"context_length", "max_model_len", "context_window"})
      if (auto n = json_count(m, key); n && *n > 0 && !p.context_tokens) p.context_tokens = *n;
  }
  if (!p.models.empty() && !p.model_listed) {
    std::string listed;
    for (size_t i = 0; i < p.models.size() && i < 10; ++i)
      listed += (i ? ", " : "") + ctx.quote(p.models[i]);
    if (p.models.size() > 10) listed += fmt::format(", ... ({} in all)", p.models.size());
    return Status::error(fmt::format("model {} is not among the models {} serves: {}",
                                     settings_.model, ctx.url, listed));
  }
  return p;
}

Status check_context(const ProbeResult& probe, const LlmSettings& settings, int64_t needed) {
  const int64_t context = probe.context_tokens.value_or(settings.context_tokens);
  if (context <= 0 || needed <= context) return ok_status();
  return Status::error(fmt::format(
      "model {} has a context of {} tokens ({}); this needs {}", settings.model, context,
      probe.context_tokens ? "as the endpoint reports" : "as configured", needed));
}

}  // namespace kf::llm
