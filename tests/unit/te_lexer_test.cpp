// The TE lexer: token kinds, numbers next to ranges, comments, positions, errors.
#include <gtest/gtest.h>

#include <string>

#include "te/lexer.h"

namespace kf::te {
namespace {

std::string kinds(const std::string& text) {
  auto toks = lex(text, "f.toml", 1);
  EXPECT_TRUE(toks) << toks.error().message();
  std::string s;
  if (!toks) return s;
  for (const Token& t : *toks) {
    if (t.kind == TokenKind::ident) {
      s += "id:" + t.text;
    } else if (t.kind == TokenKind::integer) {
      s += "int:" + t.text;
    } else if (t.kind == TokenKind::floating) {
      s += "float:" + t.text;
    } else if (t.kind == TokenKind::end) {
      s += "end";
    } else {
      s += t.text;  // punctuation
    }
    s += " ";
  }
  return s;
}

TEST(TeLexer, Tokens) {
  EXPECT_EQ(kinds("C[i, j] = sum(k: A[i,k])"),
            "id:C [ id:i , id:j ] = id:sum ( id:k : id:A [ id:i , id:k ] ) end ");
  EXPECT_EQ(kinds("a<=b>=c==d!=e&&f||!g<h>i%j/k*l-m+n"),
            "id:a <= id:b >= id:c == id:d != id:e && id:f || ! id:g < id:h > id:i % id:j / id:k "
            "* id:l - id:m + id:n end ");
}

TEST(TeLexer, NumbersAndRanges) {
  EXPECT_EQ(kinds("0..K 1.5 2. .5 1e-6 3E+2 7"),
            "int:0 .. id:K float:1.5 float:2. float:.5 float:1e-6 float:3E+2 int:7 end ");
  auto toks = lex("1e-6", "f", 1);
  ASSERT_TRUE(toks);
  EXPECT_EQ((*toks)[0].value, 1e-6);
}

TEST(TeLexer, CommentsAndPositions) {
  auto toks = lex("# header\n  x # trailing\n\ty", "f.toml", 20);
  ASSERT_TRUE(toks);
  ASSERT_EQ(toks->size(), 3u);
  EXPECT_EQ((*toks)[0].loc.line, 21);
  EXPECT_EQ((*toks)[0].loc.col, 3);
  EXPECT_EQ((*toks)[1].loc.line, 22);
  EXPECT_EQ((*toks)[1].loc.col, 2);  // a tab is one column
  EXPECT_EQ(describe((*toks)[2]), "the end of the spec");
}

TEST(TeLexer, Errors) {
  auto bad = lex("x = y $ z", "f.toml", 3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "f.toml:3:7: unexpected character '$'");
  bad = lex("x = 2y", "f.toml", 3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(),
            "f.toml:3:6: expected an operator after the number '2', got 'y'");
  bad = lex("x = a & b", "f.toml", 3);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "f.toml:3:7: unexpected character '&'");
}

}  // namespace
}  // namespace kf::te
