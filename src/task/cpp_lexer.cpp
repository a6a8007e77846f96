#include "task/cpp_lexer.h"

#include <fmt/format.h>

#include <array>

namespace kf {
namespace {

bool ident_start(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}
bool ident_char(unsigned char c) {
  return ident_start(c) || (c >= '0' && c <= '9');
}
bool digit(unsigned char c) {
  return c >= '0' && c <= '9';
}

// Longest punctuators first: the lexer takes the longest that matches.
constexpr std::array<std::string_view, 4> kPunct3 = {"<<=", ">>=", "...", "->*"};
constexpr std::array<std::string_view, 21> kPunct2 = {
    "::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&",
    "||", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##"};

class Lexer {
 public:
  explicit Lexer(std::string_view s) : s_(s) {}

  Expected<std::vector<CppToken>> run() {
    while (i_ < s_.size()) {
      const unsigned char c = s_[i_];
      if (c == '\n') {
        advance(1);
        line_start_ = true;
        continue;
      }
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        advance(1);
        continue;
      }
      if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {  // a line splice
        advance(2);
        continue;
      }
      if (s_.compare(i_, 2, "//") == 0) {
        while (i_ < s_.size() && s_[i_] != '\n') advance(1);
        continue;
      }
      if (s_.compare(i_, 2, "/*") == 0) {
        KF_RETURN_IF_ERROR(block_comment());
        continue;
      }
      const bool at_line_start = line_start_;
      line_start_ = false;
      if (c == '#' && at_line_start) {
        directive();
        continue;
      }
      Status st = ok_status();
      if (ident_start(c)) {
        st = identifier_or_literal();
      } else if (digit(c) || (c == '.' && i_ + 1 < s_.size() && digit(s_[i_ + 1]))) {
        number();
      } else if (c == '"' || c == '\'') {
        st = quoted(i_, i_);
      } else {
        punct();
      }
      KF_RETURN_IF_ERROR(st);
    }
    return std::move(out_);
  }

 private:
  void advance(size_t n) {
    for (size_t k = 0; k < n && i_ < s_.size(); ++k, ++i_)
      if (s_[i_] == '\n') {
        ++line_;
        line_begin_ = i_ + 1;
      }
  }

  void emit(CppTokenKind kind, size_t begin, int line, size_t line_begin) {
    out_.push_back({.kind = kind,
                    .text = s_.substr(begin, i_ - begin),
                    .offset = begin,
                    .line = line,
                    .column = static_cast<int>(begin - line_begin) + 1});
  }

  Status fail(int line, const std::string& what) const {
    return Status::error(fmt::format("line {}: {}", line, what));
  }

  Status block_comment() {
    const int line = line_;
    const size_t end = s_.find("*/", i_ + 2);
    if (end == std::string_view::npos) return fail(line, "unterminated comment (/* without */)");
    advance(end + 2 - i_);
    return ok_status();
  }

  // A preprocessor line, with its continuation lines (a backslash before the newline).
  void directive() {
    const size_t begin = i_, line_begin = line_begin_;
    const int line = line_;
    while (i_ < s_.size() && s_[i_] != '\n') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        advance(2);
        continue;
      }
      advance(1);
    }
    emit(CppTokenKind::directive, begin, line, line_begin);
  }

  // An identifier, or the prefix of a literal: u8"..", L'x', R"d(..)d".
  Status identifier_or_literal() {
    const size_t begin = i_;
    size_t j = i_;
    while (j < s_.size() && ident_char(s_[j])) ++j;
    const std::string_view word = s_.substr(i_, j - i_);
    if (j < s_.size() && (s_[j] == '"' || s_[j] == '\'')) {
      const bool raw = word == "R" || word == "u8R" || word == "uR" || word == "UR" || word == "LR";
      const bool prefix = word == "u8" || word == "u" || word == "U" || word == "L";
      if (raw && s_[j] == '"') return raw_string(begin, j);
      if (prefix) return quoted(begin, j);
    }
    const int line = line_;
    const size_t line_begin = line_begin_;
    advance(j - i_);
    emit(CppTokenKind::identifier, begin, line, line_begin);
    return ok_status();
  }

  // A pp-number: digits, letters, '.', digit separators, and a sign after an exponent letter.
  void number() {
    const size_t begin = i_, line_begin = line_begin_;
    const int line = line_;
    size_t j = i_;
    while (j < s_.size()) {
      const unsigned char c = s_[j];
      if (ident_char(c) || c == '.' || (c == '\'' && j + 1 < s_.size() && ident_char(s_[j + 1]))) {
        ++j;
        continue;
      }
      const unsigned char prev = s_[j - 1];
      if ((c == '+' || c == '-') && (prev == 'e' || prev == 'E' || prev == 'p' || prev == 'P')) {
        ++j;
        continue;
      }
      break;
    }
    advance(j - i_);
    emit(CppTokenKind::number, begin, line, line_begin);
  }

  // "..." or '...' starting at `quote` (a prefix, if any, starts at `begin`).
  Status quoted(size_t begin, size_t quote) {
    const int line = line_;
    const size_t line_begin = line_begin_;
    const char q = s_[quote];
    size_t j = quote + 1;
    while (j < s_.size() && s_[j] != q) {
      if (s_[j] == '\n') break;
      j += s_[j] == '\\' ? 2 : 1;
    }
    if (j >= s_.size() || s_[j] != q)
      return fail(line,
                  q == '"' ? "unterminated string literal" : "unterminated character literal");
    advance(j + 1 - i_);
    emit(q == '"' ? CppTokenKind::string : CppTokenKind::character, begin, line, line_begin);
    return ok_status();
  }

  // R"delim( ... )delim": the delimiter is at most 16 characters, none of them space,
  // parentheses or backslash.
  Status raw_string(size_t begin, size_t quote) {
    const int line = line_;
    const size_t line_begin = line_begin_;
    size_t j = quote + 1;
    while (j < s_.size() && j - quote - 1 <= 16 && s_[j] != '(') {
      const char c = s_[j];
      if (c == ' ' || c == ')' || c == '\\' || c == '\t' || c == '\n' || c == '"')
        return fail(line, "malformed raw string delimiter");
      ++j;
    }
    if (j >= s_.size() || s_[j] != '(') return fail(line, "malformed raw string delimiter");
    const std::string close = ")" + std::string(s_.substr(quote + 1, j - quote - 1)) + "\"";
    const size_t end = s_.find(close, j + 1);
    if (end == std::string_view::npos) return fail(line, "unterminated raw string literal");
    advance(end + close.size() - i_);
    emit(CppTokenKind::string, begin, line, line_begin);
    return ok_status();
  }

  void punct() {
    const size_t begin = i_, line_begin = line_begin_;
    const int line = line_;
    size_t n = 1;
    for (std::string_view p : kPunct3)
      if (s_.compare(i_, 3, p) == 0) n = 3;
    if (n == 1)
      for (std::string_view p : kPunct2)
        if (s_.compare(i_, 2, p) == 0) n = 2;
    advance(n);
    emit(CppTokenKind::punct, begin, line, line_begin);
  }

  std::string_view s_;
  size_t i_ = 0, line_begin_ = 0;
  int line_ = 1;
  bool line_start_ = true;
  std::vector<CppToken> out_;
};

}  // namespace

Expected<std::vector<CppToken>> lex_cpp(std::string_view source) {
  if (source.size() > kMaxCppSourceBytes)
    return Status::error(
        fmt::format("over {} bytes: kforge reads at most that much C++", kMaxCppSourceBytes));
  return Lexer(source).run();
}

}  // namespace kf
