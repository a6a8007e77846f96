// A team of brains written in a file (agents/brain_config.h): the same teams --brain names, the
// files brain's folder relative to the file, and clear errors for anything else.
#include <gtest/gtest.h>

#include <string>

#include "agents/brain_config.h"

namespace kf::agents {
namespace {

const std::filesystem::path kFile = "/teams/mixed.toml";

TEST(BrainConfig, ATeamPerRoleAndTheFilesBrainsFolder) {
  auto c = parse_brain_config(R"([brain]
planner = "builtin"
implementer = "files"
sources = "by_strategy"
)",
                              kFile);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->options.sources, std::filesystem::path("/teams/by_strategy"));
  auto team = parse_team(c->spec);
  ASSERT_TRUE(team) << team.error().message();
  EXPECT_EQ(team->at("planner"), "builtin");
  EXPECT_EQ(team->at("implementer"), "files");
  EXPECT_EQ(team->at("debugger"), "builtin") << "roles not named get the default";
  auto absolute = parse_brain_config("[brain]\ndefault = \"files\"\nsources = \"/k\"\n", kFile);
  ASSERT_TRUE(absolute) << absolute.error().message();
  EXPECT_EQ(absolute->options.sources, std::filesystem::path("/k"));
}

// One kforge.toml may hold the team and the LLM brain's settings: the team reader leaves [llm]
// to llm/config.h.
TEST(BrainConfig, AnLlmTableMayShareTheFile) {
  auto c = parse_brain_config("[brain]\nplanner = \"llm\"\n[llm]\nmodel = \"coder\"\n", kFile);
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(parse_team(c->spec)->at("planner"), "llm");
}

TEST(BrainConfig, AnythingElseIsAClearError) {
  auto message = [](const std::string& text) {
    auto c = parse_brain_config(text, kFile);
    EXPECT_FALSE(c) << text;
    return c ? std::string() : c.error().message();
  };
  EXPECT_NE(message("[brain\n").find("TOML syntax error"), std::string::npos);
  EXPECT_NE(message("[team]\nplanner = \"builtin\"\n").find("unknown table 'team'"),
            std::string::npos);
  EXPECT_NE(message("x = 1\n").find("unknown table"), std::string::npos);
  EXPECT_NE(message("").find("no [brain] table"), std::string::npos);
  EXPECT_NE(message("[brain]\n").find("names no role"), std::string::npos);
  EXPECT_NE(message("[brain]\nplanner = 3\n").find("brain.planner must be a string"),
            std::string::npos);
  EXPECT_NE(message("[brain]\nplanner = \"gpt\"\n").find("unknown brain 'gpt'"), std::string::npos);
  EXPECT_NE(message("[brain]\ncritic = \"builtin\"\n").find("unknown role 'critic'"),
            std::string::npos);
  EXPECT_NE(message("[brain]\nplanner = \"builtin,default=files\"\n").find("one brain"),
            std::string::npos)
      << "a value cannot add pairs";
  const std::string big = "[brain]\n# " + std::string(kMaxBrainConfigBytes, 'x') + "\n";
  EXPECT_NE(message(big).find("over 65536 bytes"), std::string::npos);
  EXPECT_LT(message("[brain]\nplanner = \"\x1b]0;x\x07\"\n").size(), 400u);
}

}  // namespace
}  // namespace kf::agents
