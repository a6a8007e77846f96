// The TE lexer: spec text -> tokens with absolute task.toml positions.
//
//   Expected<std::vector<Token>> toks = lex("C[i, j] = sum(k: A[i, k])", "task.toml", 26);
//   // ident "C" at 26:1, '[' at 26:2, ... , end
//
// Comments run from '#' to the end of the line. Numbers are integers (`12`) or floats (`1.5`,
// `1e-6`, `2.`); `0..K` lexes as 0, '..', K. A float beyond double's range and an integer beyond
// 2^53 are errors. Errors read "FILE:LINE:COL: unexpected character".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"
#include "te/ast.h"

namespace kf::te {

enum class TokenKind {
  ident,
  integer,
  floating,
  lbracket,
  rbracket,
  lparen,
  rparen,
  comma,
  colon,
  assign,
  dotdot,
  plus,
  minus,
  star,
  slash,
  percent,
  lt,
  le,
  gt,
  ge,
  eq,
  ne,
  and_,
  or_,
  not_,
  end,
};

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;
  double value = 0;  // integer, floating
  SourceLoc loc;
};

// A short description for messages: "'foo'", "'['", "the end of the spec".
std::string describe(const Token& t);

// The longest name a spec may use (tensor, variable, function).
inline constexpr size_t kMaxIdentifier = 128;

Expected<std::vector<Token>> lex(std::string_view text, const std::string& file, int first_line);

// "FILE:LINE:COL: message".
Status error_at(const std::string& file, SourceLoc loc, const std::string& message);

}  // namespace kf::te
