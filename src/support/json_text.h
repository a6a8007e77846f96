// JSON text from values that may hold untrusted bytes (a candidate's output, compiler
// diagnostics, `#pragma message` text, file contents).
//
//   std::cout << dump_json(result.to_json(), 2);   // never throws on invalid UTF-8
//   std::string s = sanitize_utf8(raw_bytes);          // "a\xff" -> "a\uFFFD"
//
// nlohmann::json::dump() throws type_error 316 on a string that is not valid UTF-8, and an
// uncaught exception ends the judge: every dump of JSON that can hold untrusted text goes
// through dump_json, which writes U+FFFD for each invalid sequence instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace kf {

// j.dump(indent) with invalid UTF-8 replaced by U+FFFD. Never throws on string contents.
std::string dump_json(const nlohmann::json& j, int indent = -1);

// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, <= U+10FFFF).
bool is_valid_utf8(std::string_view s);

// `s` with every ill-formed sequence replaced by U+FFFD (one per maximal ill-formed subpart, as
// Unicode recommends); valid text is returned unchanged.
std::string sanitize_utf8(std::string_view s);

// `s` made safe to print on a terminal: sanitize_utf8, then every control character but newline
// and tab (escape sequences start with one) replaced by '?'. For messages that quote untrusted
// text (a task file, a schedule, a compiler's log).
std::string terminal_text(std::string_view s);

// `s` cut to at most `width` bytes for a table's column, the last kept one replaced by '~' when
// cut (so columns stay aligned; a cut never splits a UTF-8 sequence).
std::string column_text(std::string_view s, size_t width);

}  // namespace kf
