// The primitive table (schedule/primitive_table.h) drives the trace parser, the dispatch and the
// random-schedule fuzzer; docs/schedule.md's primitive table is checked against it here.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "lower_test_util.h"
#include "schedule/primitive_table.h"
#include "support/fs.h"

namespace kf::sched {
namespace {

TEST(PrimitiveTable, HasOneRowPerKindInKindOrder) {
  const auto& table = primitive_table();
  ASSERT_EQ(table.size(), static_cast<size_t>(PrimitiveKind::specialize_uniform) + 1);
  std::set<std::string> words;
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(table[i].kind), i) << table[i].word;
    EXPECT_TRUE(words.insert(table[i].word).second) << table[i].word;
    EXPECT_NE(table[i].apply, nullptr) << table[i].word;
    EXPECT_GT(table[i].random_weight, 0) << table[i].word << " is never fuzzed";
    EXPECT_EQ(to_string(table[i].kind), table[i].word);
  }
}

// The parser reads each row's form: the fewest arguments a row allows parse, one fewer is refused
// with the row's usage.
TEST(PrimitiveTable, TheParserReadsEachRowsForm) {
  for (const PrimitiveInfo& info : primitive_table()) {
    std::string text = info.word;
    for (size_t i = 0; i + static_cast<size_t>(info.optional) < info.args.size(); ++i)
      text += info.args[i] == PrimitiveArg::integer    ? " 4"
              : info.args[i] == PrimitiveArg::loop_ref ? " s.l"
                                                       : " n" + std::to_string(i);
    auto p = parse_primitive(text);
    ASSERT_TRUE(p) << text << ": " << p.error().message();
    EXPECT_EQ(p->kind, info.kind);
    EXPECT_EQ(p->to_string(), text);
    const std::string short_text = text.substr(0, text.rfind(' '));
    if (info.args.size() - static_cast<size_t>(info.optional) < 1 || short_text == info.word)
      continue;
    auto refused = parse_primitive(short_text);
    ASSERT_FALSE(refused) << short_text;
    EXPECT_NE(refused.error().message().find(info.usage()), std::string::npos)
        << refused.error().message();
  }
}

// docs/schedule.md lists exactly the table's primitives, each with as many operands.
TEST(PrimitiveTable, TheDocsListEveryPrimitiveWithItsOperands) {
  auto doc = read_file(testing::source_dir() / "docs/schedule.md");
  ASSERT_TRUE(doc) << doc.error().message();
  const std::regex row(R"(\n\| `([a-z_]+)((?: [^`|]+)?)` \|)");
  std::map<std::string, int> documented;  // word -> operands
  for (std::sregex_iterator it(doc->begin(), doc->end(), row), end; it != end; ++it) {
    std::istringstream ops((*it)[2].str());
    int n = 0;  // operands; a standalone "..." repeats the one before it
    for (std::string op; ops >> op;) n += op != "...";
    documented[(*it)[1].str()] = n;
  }
  for (const PrimitiveInfo& info : primitive_table()) {
    auto d = documented.find(info.word);
    ASSERT_NE(d, documented.end()) << info.word << " has no row in docs/schedule.md";
    EXPECT_EQ(static_cast<size_t>(d->second), info.args.size())
        << info.word << ": the docs' operands differ from '" << info.usage() << "'";
    documented.erase(d);
  }
  for (const auto& [word, n] : documented)
    ADD_FAILURE() << "docs/schedule.md documents '" << word << "', which is not a primitive";
}

}  // namespace
}  // namespace kf::sched
