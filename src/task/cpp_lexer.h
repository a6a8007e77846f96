// Tokens of C++ source text, for the few places kforge reads a user's C++ (`kforge new` finds the
// kernel function in a file and rewrites it as the template a task's reference must be). Not a
// compiler: it splits text into identifiers, numbers, literals, punctuators and preprocessor
// lines, drops comments and whitespace, and records where each token is, so a caller can find a
// function's parameter list or body and edit the original text by offset.
//
//   auto toks = lex_cpp(source);
//   if (!toks) return toks.error();        // "line 12: unterminated comment"
//   for (const CppToken& t : *toks) if (t.is("float")) ...;
//
// The text is untrusted: the lexer reads each byte a bounded number of times, never recurses,
// never throws, and refuses text over kMaxCppSourceBytes. Tokens view the text they came from,
// which must outlive them.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace kf {

inline constexpr size_t kMaxCppSourceBytes = size_t{1} << 20;

enum class CppTokenKind {
  identifier,  // also keywords: `float`, `const`, `template`
  number,      // a pp-number: 1, 0x1f, 1.5e-3f, 1'000
  string,      // "...", u8"...", R"d(...)d" (prefix included)
  character,   // 'a', L'b'
  punct,       // :: -> ( ) { } < > * & , ; = and every other symbol, one or more characters
  directive,   // a whole preprocessor line: "#include <cmath>" (continuation lines included)
};

struct CppToken {
  CppTokenKind kind = CppTokenKind::punct;
  std::string_view text;
  size_t offset = 0;  // of the first byte in the source
  int line = 1;       // 1-based
  int column = 1;     // 1-based, in bytes

  bool is(std::string_view s) const { return text == s; }
  bool is_identifier() const { return kind == CppTokenKind::identifier; }
  size_t end() const { return offset + text.size(); }
};

// Fails on text longer than kMaxCppSourceBytes, an unterminated comment, string or character
// literal, or a raw string whose delimiter is malformed; the message starts "line L:".
Expected<std::vector<CppToken>> lex_cpp(std::string_view source);

}  // namespace kf
