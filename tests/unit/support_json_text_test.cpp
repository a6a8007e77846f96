#include <gtest/gtest.h>

#include "support/json_text.h"

namespace kf {
namespace {

TEST(JsonText, DumpReplacesInvalidUtf8InsteadOfThrowing) {
  nlohmann::json j = {{"output_log", std::string("ok \xff\xfe then \xc3")}, {"n", 3}};
  EXPECT_THROW((void)j.dump(), nlohmann::json::type_error);  // what used to end the judge
  const std::string text = dump_json(j);
  EXPECT_EQ(text, "{\"n\":3,\"output_log\":\"ok \xEF\xBF\xBD\xEF\xBF\xBD then \xEF\xBF\xBD\"}");
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(dump_json(nlohmann::json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

TEST(JsonText, ValidTextIsUnchanged) {
  const std::string s = "plain, \xC3\xA9t\xC3\xA9, \xE2\x82\xAC, \xF0\x9F\x98\x80, \x7F";
  EXPECT_TRUE(is_valid_utf8(s));
  EXPECT_EQ(sanitize_utf8(s), s);
  EXPECT_TRUE(is_valid_utf8(""));
}

TEST(JsonText, EachMaximalIllFormedSubpartBecomesOneReplacement) {
  const std::string r = "\xEF\xBF\xBD";
  EXPECT_EQ(sanitize_utf8("\xE2\x82"), r);  // truncated 3-byte sequence: one
  EXPECT_EQ(sanitize_utf8("\xE2\x82"
                          "A"),
            r + "A");                                           // cut by an ASCII byte
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), r + r);                  // overlong: both bytes ill-formed
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), r + r + r);          // a surrogate (CESU-8)
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"), r + r + r + r);  // beyond U+10FFFF
  EXPECT_EQ(sanitize_utf8("\x80"), r);
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("a\xff"));
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    EXPECT_TRUE(is_valid_utf8(sanitize_utf8(one + "\xF0\x9F" + one)));
  }
}

TEST(ColumnText, CutsLongTextWithAMarkAndNeverSplitsAUtf8Sequence) {
  EXPECT_EQ(column_text("short", 8), "short");
  EXPECT_EQ(column_text("confirm:strength_reduce", 10), "confirm:s~");
  EXPECT_EQ(column_text("confirm:strength_reduce", 10).size(), 10u);
  // "ab" then two 2-byte letters: a cut inside the second keeps only whole ones.
  EXPECT_EQ(column_text("ab\xc3\xa9\xc3\xa9xyz", 5), "ab\xc3\xa9~");
  EXPECT_EQ(column_text("ab\xc3\xa9\xc3\xa9xyz", 4), "ab~");
}

}  // namespace
}  // namespace kf
