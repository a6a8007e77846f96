#include "support/text_scan.h"

#include <limits>

namespace kf {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Matches ":LINE:COL: KIND: " at the start of `s`; on success fills `m` (not file/text) and
// returns the length matched, else 0.
size_t located_tail(std::string_view s, std::initializer_list<std::string_view> kinds,
                    LocatedMessage* m) {
  size_t i = 0;
  if (i >= s.size() || s[i] != ':') return 0;
  ++i;
  const size_t l = run_length(s.substr(i), is_digit);
  if (l == 0) return 0;
  const std::optional<int> line = parse_decimal_saturating(s.substr(i, l));
  i += l;
  if (i >= s.size() || s[i] != ':') return 0;
  ++i;
  const size_t c = run_length(s.substr(i), is_digit);
  if (c == 0) return 0;
  const std::optional<int> column = parse_decimal_saturating(s.substr(i, c));
  i += c;
  if (s.substr(i, 2) != ": ") return 0;
  i += 2;
  for (std::string_view k : kinds) {
    if (s.substr(i, k.size()) != k || s.substr(i + k.size(), 2) != ": ") continue;
    m->line = *line;
    m->column = *column;
    m->kind = s.substr(i, k.size());
    return i + k.size() + 2;
  }
  return 0;
}

}  // namespace

bool is_regex_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
bool is_line_terminator(char c) {
  return c == '\n' || c == '\r';
}
bool is_hex_digit(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_word_char(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool dot_matches_all(std::string_view s) {
  return s.find_first_of("\r\n") == std::string_view::npos;
}

std::optional<int> parse_decimal_saturating(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  int64_t v = 0;
  for (char c : digits) {
    if (!is_digit(c)) return std::nullopt;
    v = std::min(kMax, v * 10 + (c - '0'));
  }
  return static_cast<int>(v);
}

std::optional<uint64_t> parse_hex_saturating(std::string_view digits) {
  if (digits.empty()) return std::nullopt;
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  for (char c : digits) {
    if (!is_hex_digit(c)) return std::nullopt;
    const uint64_t d =
        is_digit(c) ? static_cast<uint64_t>(c - '0') : static_cast<uint64_t>((c | 0x20) - 'a' + 10);
    v = v > (kMax - d) / 16 ? kMax : v * 16 + d;
  }
  return v;
}

std::optional<LocatedMessage> parse_located_message(std::string_view line,
                                                    std::initializer_list<std::string_view> kinds) {
  // `.` matches neither '\r' nor '\n', and FILE and TEXT together cover every character outside
  // the fixed middle part, which holds none either.
  if (!dot_matches_all(line)) return std::nullopt;
  // Each candidate split scans at most the two digit runs after it, and a digit run is scanned
  // by at most two splits (as LINE, then as COL of the split before): linear overall.
  for (size_t p = line.find(':'); p != std::string_view::npos; p = line.find(':', p + 1)) {
    LocatedMessage m;
    const size_t n = located_tail(line.substr(p), kinds, &m);
    if (n == 0) continue;
    m.file = line.substr(0, p);
    m.text = line.substr(p + n);
    return m;
  }
  return std::nullopt;
}

std::optional<std::string_view> flag_comment(std::string_view line) {
  std::string_view s = line;
  auto skip_space = [&]() {
    const size_t n = run_length(s, is_regex_space);
    s.remove_prefix(n);
    return n;
  };
  auto eat = [&](std::string_view word) {
    if (s.substr(0, word.size()) != word) return false;
    s.remove_prefix(word.size());
    return true;
  };
  skip_space();
  if (!eat("//")) return std::nullopt;
  skip_space();
  if (!eat("kforge:")) return std::nullopt;
  skip_space();
  if (!eat("flags")) return std::nullopt;
  // `\s+` is greedy and `.*` cannot take a line terminator back from it, so the group starts
  // after the whole run.
  if (skip_space() == 0 || !dot_matches_all(s)) return std::nullopt;
  return s;
}

std::string excerpt(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t n = max_bytes;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // a continuation byte
  return std::string(s.substr(0, n)) + "...";
}

std::string_view strip_hex_offset(std::string_view s) {
  // The hex digits must reach the end; only the maximal run can be preceded by "0x" (a shorter
  // suffix is preceded by a hex digit).
  size_t b = s.size();
  while (b > 0 && is_hex_digit(s[b - 1])) --b;
  if (b == s.size() || b < 3) return s;
  if (s[b - 1] != 'x' || s[b - 2] != '0' || (s[b - 3] != '+' && s[b - 3] != '-')) return s;
  return s.substr(0, b - 3);
}

}  // namespace kf
