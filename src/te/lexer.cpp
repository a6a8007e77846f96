// The TE lexer (see lexer.h).
#include "te/lexer.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "support/text_scan.h"

namespace kf::te {

Status error_at(const std::string& file, SourceLoc loc, const std::string& message) {
  return Status::error(file + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) +
                       ": " + message);
}

std::string describe(const Token& t) {
  if (t.kind == TokenKind::end) return "the end of the spec";
  return "'" + excerpt(t.text) + "'";
}

namespace {

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

bool ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}

struct Punct {
  std::string_view text;
  TokenKind kind;
};

// Longest first.
constexpr Punct kPuncts[] = {
    {"..", TokenKind::dotdot}, {"<=", TokenKind::le},      {">=", TokenKind::ge},
    {"==", TokenKind::eq},     {"!=", TokenKind::ne},      {"&&", TokenKind::and_},
    {"||", TokenKind::or_},    {"[", TokenKind::lbracket}, {"]", TokenKind::rbracket},
    {"(", TokenKind::lparen},  {")", TokenKind::rparen},   {",", TokenKind::comma},
    {":", TokenKind::colon},   {"=", TokenKind::assign},   {"+", TokenKind::plus},
    {"-", TokenKind::minus},   {"*", TokenKind::star},     {"/", TokenKind::slash},
    {"%", TokenKind::percent}, {"<", TokenKind::lt},       {">", TokenKind::gt},
    {"!", TokenKind::not_},
};

}  // namespace

Expected<std::vector<Token>> lex(std::string_view text, const std::string& file, int first_line) {
  std::vector<Token> out;
  int line = first_line, col = 1;
  size_t i = 0;
  auto advance = [&](size_t n) {
    i += n;
    col += static_cast<int>(n);
  };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++i;
      ++line;
      col = 1;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      advance(1);
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') advance(1);
      continue;
    }
    Token t;
    t.loc = {line, col};
    const size_t start = i;
    if (ident_start(c)) {
      while (i < text.size() && ident_char(text[i])) advance(1);
      // Names are quoted in later messages: a bounded name keeps every one of them bounded.
      if (i - start > kMaxIdentifier)
        return error_at(file, t.loc,
                        "name '" + excerpt(text.substr(start, i - start)) + "' is longer than " +
                            std::to_string(kMaxIdentifier) + " characters");
      t.kind = TokenKind::ident;
      t.text = std::string(text.substr(start, i - start));
      out.push_back(std::move(t));
      continue;
    }
    const bool leading_dot = c == '.' && i + 1 < text.size() && digit(text[i + 1]);
    if (digit(c) || leading_dot) {
      bool is_float = false;
      while (i < text.size() && digit(text[i])) advance(1);
      // A '.' starts a fraction unless it begins '..' (a range).
      if (i < text.size() && text[i] == '.' && !(i + 1 < text.size() && text[i + 1] == '.')) {
        is_float = true;
        advance(1);
        while (i < text.size() && digit(text[i])) advance(1);
      }
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        size_t j = i + 1;
        if (j < text.size() && (text[j] == '+' || text[j] == '-')) ++j;
        if (j < text.size() && digit(text[j])) {
          is_float = true;
          advance(j - i);
          while (i < text.size() && digit(text[i])) advance(1);
        }
      }
      t.text = std::string(text.substr(start, i - start));
      t.kind = is_float ? TokenKind::floating : TokenKind::integer;
      errno = 0;
      t.value = std::strtod(t.text.c_str(), nullptr);
      // Literals stay finite (`inf` is spelled out) and integers exact in double.
      if (errno == ERANGE || !std::isfinite(t.value))
        return error_at(file, t.loc, "number '" + excerpt(t.text) + "' is out of range");
      if (!is_float && t.value > kMaxExactInteger)
        return error_at(file, t.loc,
                        "integer '" + excerpt(t.text) + "' is larger than 2^53 (9007199254740992)");
      if (i < text.size() && ident_char(text[i]))
        return error_at(file, {line, col},
                        "expected an operator after the number '" + t.text + "', got '" +
                            std::string(1, text[i]) + "'");
      out.push_back(std::move(t));
      continue;
    }
    bool matched = false;
    for (const Punct& p : kPuncts) {
      if (text.substr(i, p.text.size()) == p.text) {
        t.kind = p.kind;
        t.text = std::string(p.text);
        advance(p.text.size());
        out.push_back(std::move(t));
        matched = true;
        break;
      }
    }
    if (!matched) return error_at(file, t.loc, "unexpected character '" + std::string(1, c) + "'");
  }
  Token end;
  end.kind = TokenKind::end;
  end.loc = {line, col};
  out.push_back(end);
  return out;
}

}  // namespace kf::te
