#include "llm/json_util.h"

namespace kf::llm {

bool json_depth_within(std::string_view text, size_t max_depth) {
  size_t depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return false;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return true;
}

std::optional<nlohmann::json> parse_untrusted_json(std::string_view text, size_t max_depth) {
  if (!json_depth_within(text, max_depth)) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::string json_string(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

std::optional<int64_t> json_count(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return std::nullopt;
  auto it = j.find(key);
  if (it == j.end()) return std::nullopt;
  if (it->is_number_unsigned()) {
    const uint64_t u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (it->is_number_integer() && it->get<int64_t>() >= 0) return it->get<int64_t>();
  return std::nullopt;
}

std::string error_message(const nlohmann::json& body) {
  if (!body.is_object()) return "";
  auto e = body.find("error");
  if (e != body.end()) {
    if (e->is_string()) return e->get<std::string>();
    const std::string m = json_string(*e, "message");
    if (!m.empty()) return m;
  }
  std::string m = json_string(body, "message");
  if (m.empty()) m = json_string(body, "detail");
  return m;
}

}  // namespace kf::llm
