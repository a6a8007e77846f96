// JSON read from the network or a transcript: parsed without exceptions, with the nesting depth
// bounded before the parser sees the text, and read through type-checked accessors.
//
//   std::optional<nlohmann::json> j = parse_untrusted_json(body);   // nullopt: not JSON / too deep
//   std::string m = json_string(*j, "model");                       // "" when absent or not a
//   string
//
// Why the depth check: 8 MiB of '[' is valid JSON prefix to a parser and builds millions of
// nested arrays (hundreds of MB) before it fails; a linear pre-scan refuses it first.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace kf::llm {

inline constexpr size_t kMaxJsonDepth = 128;

// Whether brackets outside strings nest at most `max_depth` deep (a linear scan).
bool json_depth_within(std::string_view text, size_t max_depth = kMaxJsonDepth);

// nullopt when `text` is not one JSON value or nests too deep. Never throws.
std::optional<nlohmann::json> parse_untrusted_json(std::string_view text,
                                                   size_t max_depth = kMaxJsonDepth);

// j[key] when j is an object holding a string there; "" otherwise.
std::string json_string(const nlohmann::json& j, const char* key);
// j[key] when j is an object holding a non-negative integer there; nullopt otherwise.
std::optional<int64_t> json_count(const nlohmann::json& j, const char* key);

// The message an OpenAI-compatible server puts in an error body: {"error": {"message": M}},
// {"error": M}, {"message": M} or {"detail": M}; "" when none.
std::string error_message(const nlohmann::json& body);

}  // namespace kf::llm
