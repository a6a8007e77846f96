#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "support/text_scan.h"

namespace kf {
namespace {

// Lines for differential tests against std::regex: half are fragments joined at random, half
// are `shape` (the matching form, one fragment per element) with one or two elements replaced
// by random fragments, so matches, near misses and ambiguous splits are all common. Short, so
// std::regex (the reference) stays within its stack.
std::vector<std::string> random_lines(const std::vector<std::string>& fragments,
                                      const std::vector<std::string>& shape, uint64_t seed,
                                      int count) {
  std::vector<std::string> out;
  uint64_t x = seed;
  auto next = [&]() {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<size_t>(x >> 33);
  };
  for (int i = 0; i < count; ++i) {
    std::vector<std::string> parts = shape;
    if (i % 2 == 0) {
      parts.assign(next() % 9, "");
      for (auto& p : parts) p = fragments[next() % fragments.size()];
    } else {
      for (size_t k = next() % 3; k > 0; --k)
        parts[next() % parts.size()] = fragments[next() % fragments.size()];
    }
    std::string s;
    for (const auto& p : parts) s += p;
    out.push_back(s);
  }
  return out;
}

TEST(TextScan, LocatedMessageAgreesWithTheRegexItReplaces) {
  const std::regex re(R"(^(.*?):(\d+):(\d+): (fatal error|error|warning|note): (.*)$)");
  const std::vector<std::string> fragments = {
      "k.cpp", ":", "12", "3",   ": ",  "error",    "fatal error", "warning", "note",
      " ",     "x", "\r", "a:b", ":7:", ": note: ", "error: ",     "0",       "\t"};
  int matched = 0;
  for (const std::string& line : random_lines(
           fragments, {"k.cpp", ":", "12", ":", "3", ": ", "error", ": ", "x"}, 1, 20000)) {
    std::smatch m;
    const bool want = std::regex_match(line, m, re);
    const auto got = parse_located_message(line, {"fatal error", "error", "warning", "note"});
    ASSERT_EQ(want, got.has_value()) << "line: '" << line << "'";
    if (!want) continue;
    ++matched;
    EXPECT_EQ(m[1].str(), got->file) << line;
    EXPECT_EQ(std::stoi(m[2].str()), got->line) << line;
    EXPECT_EQ(std::stoi(m[3].str()), got->column) << line;
    EXPECT_EQ(m[4].str(), got->kind) << line;
    EXPECT_EQ(m[5].str(), got->text) << line;
  }
  EXPECT_GT(matched, 2000);  // the generator reaches the matching shape often enough
}

TEST(TextScan, FlagCommentAgreesWithTheRegexItReplaces) {
  const std::regex re(R"(^\s*//\s*kforge:\s*flags\s+(.*)$)");
  const std::vector<std::string> fragments = {"//", " ", "\t", "kforge:", "flags", "-O3", "\r",
                                              "\v", "x", "/",  "kforge",  ":",     "\f"};
  int matched = 0;
  for (const std::string& line :
       random_lines(fragments, {" ", "//", " ", "kforge:", " ", "flags", " ", "-O3"}, 2, 20000)) {
    std::smatch m;
    const bool want = std::regex_match(line, m, re);
    const auto got = flag_comment(line);
    ASSERT_EQ(want, got.has_value()) << "line: '" << line << "'";
    if (!want) continue;
    ++matched;
    EXPECT_EQ(m[1].str(), *got) << line;
  }
  EXPECT_GT(matched, 2000);
}

TEST(TextScan, StripHexOffsetAgreesWithTheRegexItReplaces) {
  const std::regex re(R"([+-]0x[0-9a-fA-F]+$)");
  const std::vector<std::string> fragments = {"sym", "+", "-", "0x", "0", "a", "F", "x", "g", "1"};
  for (const std::string& s : random_lines(fragments, {"sym", "+", "0x", "1", "a"}, 3, 20000))
    ASSERT_EQ(std::regex_replace(s, re, ""), strip_hex_offset(s)) << "s: '" << s << "'";
}

TEST(TextScan, LongLinesAreScannedWithoutRecursion) {
  // Lines far beyond what std::regex survives (it recursed per character and overflowed).
  const std::string big(8 << 20, 'x');
  const std::string diag = "k.cpp:1:2: note: #pragma message: " + big;
  auto d = parse_located_message(diag, {"error", "warning", "note"});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->text.size(), big.size() + 17);
  EXPECT_FALSE(parse_located_message(big + ":1:2: warn", {"error"}));
  std::string colons;
  for (int i = 0; i < 1 << 20; ++i) colons += ":1";
  EXPECT_FALSE(parse_located_message(colons, {"error"}));
  auto f = flag_comment("// kforge: flags " + big);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->size(), big.size());
  EXPECT_EQ(strip_hex_offset(big + "+0x12"), big);
}

TEST(TextScan, NumbersSaturateInsteadOfThrowing) {
  auto d = parse_located_message("f.cpp:99999999999999999999:3: error: x", {"error"});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->line, 2147483647);
  EXPECT_EQ(d->column, 3);
  EXPECT_EQ(parse_decimal_saturating("0042"), 42);
  EXPECT_FALSE(parse_decimal_saturating(""));
  EXPECT_FALSE(parse_decimal_saturating("4a"));
  EXPECT_EQ(parse_hex_saturating("ff"), 255u);
  EXPECT_EQ(parse_hex_saturating("FFFFFFFFFFFFFFFFFFFF"), UINT64_MAX);
  EXPECT_FALSE(parse_hex_saturating("0x1"));
}

TEST(TextScan, KindsAreTriedInOrderAndTheFileIsTheShortestPrefix) {
  auto d = parse_located_message("a:1:2: x.cpp:3:4: error: y", {"error"});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->file, "a:1:2: x.cpp");
  EXPECT_EQ(d->line, 3);
  auto f = parse_located_message("x.cpp:3:4: fatal error: no such file", {"fatal error", "error"});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, "fatal error");
  EXPECT_EQ(f->text, "no such file");
  EXPECT_FALSE(parse_located_message("x.cpp:3:4: error:no space", {"error"}));
  EXPECT_FALSE(parse_located_message("x.cpp:3:4: error: crlf\r", {"error"}));
}

}  // namespace
}  // namespace kf
