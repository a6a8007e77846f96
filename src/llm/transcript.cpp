#include "llm/transcript.h"

#include <fmt/format.h>

#include <cmath>
#include <system_error>

#include "llm/json_util.h"
#include "support/fs.h"
#include "support/json_text.h"
#include "support/text_scan.h"

namespace kf::llm {
namespace {

using nlohmann::json;

struct Where {
  std::string file;
  std::string at(const std::string& key) const { return fmt::format("{}: {}", file, key); }
};

Expected<std::string> get_string(const json& v, const std::string& what) {
  if (!v.is_string()) return Status::error(what + " must be a string");
  return v.get<std::string>();
}

Expected<int64_t> get_count(const json& v, const std::string& what, int64_t hi) {
  if (!v.is_number_integer() || v.get<int64_t>() < 0 ||
      (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi)) ||
      v.get<int64_t>() > hi)
    return Status::error(fmt::format("{} must be an integer from 0 to {}", what, hi));
  return v.get<int64_t>();
}

Status read_exchange(const json& j, const std::string& what, Exchange& e) {
  if (!j.is_object()) return Status::error(what + " must be an object");
  for (const auto& [key, v] : j.items()) {
    const std::string at = fmt::format("{}.{}", what, excerpt(key));
    if (key == "match" || key == "role" || key == "body" || key == "content" ||
        key == "finish_reason" || key == "model") {
      auto s = get_string(v, at);
      if (!s) return s.error();
      if (key == "match") e.match = *s;
      if (key == "role") e.role = *s;
      if (key == "body") e.body = *s;
      if (key == "content") e.content = *s;
      if (key == "finish_reason") e.finish_reason = *s;
      if (key == "model") e.model = *s;
    } else if (key == "retry_after") {
      // A header value: printable ASCII, short (a number is written as it reads).
      std::string s = v.is_number() ? v.dump() : v.is_string() ? v.get<std::string>() : "";
      if (s.empty() || s.size() > 64 ||
          s.find_first_not_of(" !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                              "[]^_`abcdefghijklmnopqrstuvwxyz{|}~") != std::string::npos)
        return Status::error(at + " must be a number or a short printable string");
      e.retry_after = s;
    } else if (key == "delay_s") {
      if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
          v.get<double>() > kMaxExchangeDelayS)
        return Status::error(
            fmt::format("{} must be a number from 0 to {}", at, kMaxExchangeDelayS));
      e.delay_s = v.get<double>();
    } else if (key == "status") {
      auto n = get_count(v, at, 599);
      if (!n) return n.error();
      if (*n < 100) return Status::error(at + " must be an HTTP status from 100 to 599");
      e.status = static_cast<int>(*n);
    } else if (key == "drop") {
      if (!v.is_boolean()) return Status::error(at + " must be true or false");
      e.drop = v.get<bool>();
    } else if (key == "prompt_tokens" || key == "completion_tokens") {
      auto n = get_count(v, at, int64_t{1} << 40);
      if (!n) return n.error();
      (key == "prompt_tokens" ? e.prompt_tokens : e.completion_tokens) = *n;
    } else {
      return Status::error(fmt::format(
          "{}: unknown key (match, role, delay_s, status, retry_after, body, drop, content, "
          "finish_reason, prompt_tokens, completion_tokens, model)",
          at));
    }
  }
  return ok_status();
}

int64_t quarter(size_t chars) {
  return static_cast<int64_t>((chars + 3) / 4);
}

}  // namespace

Expected<Transcript> parse_transcript(std::string_view text, const std::string& name) {
  const Where w{excerpt(name)};
  if (text.size() > kMaxTranscriptBytes)
    return Status::error(fmt::format("{}: over {} bytes", w.file, kMaxTranscriptBytes));
  const auto j = parse_untrusted_json(text);
  if (!j) return Status::error(w.file + ": not JSON, or nested over 128 deep");
  if (!j->is_object())
    return Status::error(w.file + ": a transcript is a JSON object with \"exchanges\"");
  Transcript t;
  bool has_exchanges = false;
  for (const auto& [key, v] : j->items()) {
    if (key == "exchanges") {
      if (!v.is_array()) return Status::error(w.at("exchanges") + " must be an array");
      has_exchanges = true;
      for (size_t i = 0; i < v.size(); ++i) {
        Exchange e;
        KF_RETURN_IF_ERROR(read_exchange(v[i], w.at(fmt::format("exchanges[{}]", i)), e));
        t.exchanges.push_back(std::move(e));
      }
    } else if (key == "models") {
      if (!v.is_array()) return Status::error(w.at("models") + " must be an array of strings");
      for (const json& m : v) {
        auto s = get_string(m, w.at("models[]"));
        if (!s) return s.error();
        t.models.push_back(*s);
      }
    } else if (key == "context_length") {
      auto n = get_count(v, w.at("context_length"), 100'000'000);
      if (!n) return n.error();
      t.context_length = *n;
    } else {
      return Status::error(fmt::format("{}: unknown key '{}' (models, context_length, exchanges)",
                                       w.file, excerpt(key)));
    }
  }
  if (!has_exchanges) return Status::error(w.file + ": no \"exchanges\" array");
  return t;
}

Expected<Transcript> read_transcript(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return Status::error(fmt::format("{}: {}", excerpt(file.string()), ec.message()));
  if (size > kMaxTranscriptBytes)
    return Status::error(
        fmt::format("{}: over {} bytes", excerpt(file.string()), kMaxTranscriptBytes));
  auto text = read_file(file);
  if (!text) return text.error();
  return parse_transcript(*text, file.string());
}

bool exchange_matches(const Exchange& e, std::string_view last_user_message,
                      std::string_view role_tag) {
  if (!e.role.empty() && e.role != role_tag) return false;
  return e.match.empty() || last_user_message.find(e.match) != std::string_view::npos;
}

std::string last_user_message(const json& request) {
  if (!request.is_object()) return "";
  const auto m = request.find("messages");
  if (m == request.end() || !m->is_array()) return "";
  for (auto it = m->rbegin(); it != m->rend(); ++it)
    if (json_string(*it, "role") == "user" && it->contains("content") &&
        (*it)["content"].is_string())
      return (*it)["content"].get<std::string>();
  return "";
}

std::string exchange_body(const Exchange& e, const json& request, int id) {
  if (e.body) return *e.body;
  if (e.status != 200)
    return dump_json({{"error",
                       {{"message", fmt::format("scripted HTTP {} (kforge replay)", e.status)},
                        {"type", "kforge_replay"}}}});
  size_t prompt_chars = 0;
  if (request.is_object() && request.contains("messages") && request["messages"].is_array())
    for (const json& m : request["messages"]) prompt_chars += json_string(m, "content").size();
  const int64_t p = e.prompt_tokens.value_or(quarter(prompt_chars));
  const int64_t q = e.completion_tokens.value_or(quarter(e.content.size()));
  const std::string model = e.model.empty() ? json_string(request, "model") : e.model;
  json reply = {
      {"id", fmt::format("kforge-replay-{}", id)},
      {"object", "chat.completion"},
      {"created", 0},
      {"model", model},
      {"choices", json::array({{{"index", 0},
                                {"message", {{"role", "assistant"}, {"content", e.content}}},
                                {"finish_reason", e.finish_reason}}})},
      {"usage", {{"prompt_tokens", p}, {"completion_tokens", q}, {"total_tokens", p + q}}}};
  return dump_json(reply);
}

}  // namespace kf::llm
