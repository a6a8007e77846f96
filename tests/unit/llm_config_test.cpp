// The LLM endpoint settings (llm/config.h): the [llm] table over the variables over the
// defaults, per-role overrides, prices, and clear errors (naming file and key, never a key's
// value) for anything hostile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "llm/config.h"
#include "support/fs.h"

namespace kf::llm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::filesystem::path kFile = "/cfg/kforge.toml";

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string error_of(const std::string& text, const EnvLookup& env = env_of({})) {
  auto c = parse_llm_config(text, kFile, env);
  EXPECT_FALSE(c) << text;
  return c ? std::string() : c.error().message();
}

TEST(LlmConfig, TheFileSetsEveryFieldAndRolesOverrideAny) {
  auto c = parse_llm_config(R"(
[other]                       # another part of kforge.toml: ignored here
x = 1
[llm]
base_url = "https://api.example.com/v1/"
model = "big"
api_key = "sk-file"
timeout_s = 120
connect_timeout_s = 3.5
max_retries = 6
context_tokens = 128000
[llm.prices.big]
input = 2.5
output = 10
[llm.prices."*"]
input = 1
output = 2
[llm.planner]
model = "thinker"
timeout_s = 600
[llm.debugger]
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "LOCAL_KEY"
max_retries = 0
)",
                            kFile, env_of({{"LOCAL_KEY", "sk-local"}}));
  ASSERT_TRUE(c) << c.error().message();
  const LlmSettings impl = c->settings_for(LlmRole::implementer);
  EXPECT_EQ(impl.base_url, "https://api.example.com/v1") << "the trailing '/' is dropped";
  EXPECT_EQ(impl.model, "big");
  EXPECT_EQ(impl.api_key, "sk-file");
  EXPECT_EQ(impl.timeout_s, 120);
  EXPECT_EQ(impl.connect_timeout_s, 3.5);
  EXPECT_EQ(impl.max_retries, 6);
  EXPECT_EQ(impl.context_tokens, 128000);
  const LlmSettings plan = c->settings_for(LlmRole::planner);
  EXPECT_EQ(plan.model, "thinker");
  EXPECT_EQ(plan.timeout_s, 600);
  EXPECT_EQ(plan.base_url, impl.base_url) << "what the role leaves out comes from [llm]";
  EXPECT_EQ(plan.api_key, "sk-file");
  const LlmSettings debug = c->settings_for(LlmRole::debugger);
  EXPECT_EQ(debug.base_url, "http://127.0.0.1:8080/v1");
  EXPECT_EQ(debug.api_key, "sk-local");
  EXPECT_EQ(debug.api_key_source, "env LOCAL_KEY");
  EXPECT_EQ(debug.max_retries, 0);
  EXPECT_EQ(debug.model, "big");
  EXPECT_EQ(c->prices.at("big").input_per_mtok, 2.5);
  EXPECT_EQ(c->prices.at("big").output_per_mtok, 10);
  EXPECT_EQ(c->prices.at("*").output_per_mtok, 2);
}

TEST(LlmConfig, TheVariablesFillInOnlyWhatTheFileLeavesOut) {
  const auto env =
      env_of({{"OPENAI_BASE_URL", "http://env-host:9000/v1"}, {"OPENAI_API_KEY", "sk-env"}});
  auto without = parse_llm_config("[llm]\nmodel = \"m\"\n", kFile, env);
  ASSERT_TRUE(without) << without.error().message();
  EXPECT_EQ(without->defaults.base_url, "http://env-host:9000/v1");
  EXPECT_EQ(without->defaults.api_key, "sk-env");
  EXPECT_EQ(without->defaults.api_key_source, "env OPENAI_API_KEY");
  auto with = parse_llm_config(
      "[llm]\nmodel = \"m\"\nbase_url = \"http://file:1/v1\"\napi_key = \"sk-file\"\n", kFile, env);
  ASSERT_TRUE(with) << with.error().message();
  EXPECT_EQ(with->defaults.base_url, "http://file:1/v1");
  EXPECT_EQ(with->defaults.api_key, "sk-file");
  // A malformed variable the file makes unnecessary is not read at all.
  auto ignored = parse_llm_config("[llm]\nbase_url = \"http://file:1/v1\"\n", kFile,
                                  env_of({{"OPENAI_BASE_URL", "ftp://nope"}}));
  EXPECT_TRUE(ignored) << ignored.error().message();
  // No file at all: the variables and the defaults.
  auto bare = llm_config_from_env(env);
  ASSERT_TRUE(bare) << bare.error().message();
  EXPECT_EQ(bare->settings_for(LlmRole::planner).base_url, "http://env-host:9000/v1");
  EXPECT_EQ(bare->settings_for(LlmRole::planner).timeout_s, 300);
  EXPECT_THAT(bare->defaults.validate().message(), HasSubstr("no LLM model"));
  EXPECT_THAT(LlmSettings{}.validate().message(), HasSubstr("OPENAI_BASE_URL"));
}

TEST(LlmConfig, HostileFilesAreClearErrors) {
  EXPECT_THAT(error_of("[llm\n"), HasSubstr("TOML syntax error"));
  EXPECT_THAT(error_of("llm = 3\n"), HasSubstr("llm must be a table"));
  EXPECT_THAT(error_of("[llm]\nmodel = 7\n"),
              HasSubstr("/cfg/kforge.toml: llm.model must be a string"));
  EXPECT_THAT(error_of("[llm]\ntimeout_s = \"slow\"\n"),
              HasSubstr("llm.timeout_s must be a number"));
  EXPECT_THAT(error_of("[llm]\ntimeout_s = 0\n"), HasSubstr("llm.timeout_s must be over 0"));
  EXPECT_THAT(error_of("[llm]\ntimeout_s = nan\n"), HasSubstr("llm.timeout_s must be over 0"));
  EXPECT_THAT(error_of("[llm]\nmax_retries = 1.5\n"),
              HasSubstr("llm.max_retries must be an integer"));
  EXPECT_THAT(error_of("[llm]\nmax_retries = 1000\n"), HasSubstr("from 0 to 20"));
  EXPECT_THAT(error_of("[llm]\ncontext_tokens = -1\n"), HasSubstr("llm.context_tokens"));
  EXPECT_THAT(error_of("[llm]\nbase_url = \"file:///etc/passwd\"\n"), HasSubstr("not an http"));
  EXPECT_THAT(error_of("[llm]\nbase_url = \"http://a b\"\n"), HasSubstr("holds a space"));
  EXPECT_THAT(error_of("[llm]\ntemperature = 1\n"), HasSubstr("unknown key 'llm.temperature'"));
  EXPECT_THAT(error_of("[llm.writer]\nmodel = \"m\"\n"), HasSubstr("unknown key 'llm.writer'"));
  EXPECT_THAT(error_of("[llm]\nplanner = \"m\"\n"), HasSubstr("llm.planner must be a table"));
  EXPECT_THAT(error_of("[llm.planner]\nprices = 1\n"),
              HasSubstr("unknown key 'llm.planner.prices'"));
  EXPECT_THAT(error_of("[llm.prices]\nm = 3\n"), HasSubstr("llm.prices.m must be a table"));
  EXPECT_THAT(error_of("[llm.prices.m]\ninput = -1\n"),
              HasSubstr("llm.prices.m.input must be at least 0"));
  EXPECT_THAT(error_of("[llm.prices.m]\nin = 1\n"), HasSubstr("unknown key 'in'"));
  EXPECT_THAT(error_of("[llm]\napi_key_env = \"NOT_SET\"\n"),
              HasSubstr("llm.api_key_env names NOT_SET, which is not set"));
  EXPECT_THAT(error_of("[llm]\napi_key_env = \"A;B\"\n"), HasSubstr("must name an environment"));
  EXPECT_THAT(error_of("[llm]\napi_key = \"sk-x\"\napi_key_env = \"K\"\n", env_of({{"K", "v"}})),
              HasSubstr("both api_key and api_key_env"));
  EXPECT_THAT(error_of(std::string(kMaxLlmConfigBytes + 1, '#')), HasSubstr("over 262144 bytes"));
}

TEST(LlmConfig, NoErrorOrDescriptionQuotesAKey) {
  const std::string key = "sk-very-secret-123";
  // A key with a newline would inject a header: refused, without quoting it.
  const std::string bad = error_of("[llm]\napi_key = \"" + key + "\\r\\nX-Evil: 1\"\n");
  EXPECT_THAT(bad, HasSubstr("llm.api_key: a key is 1 to 4096 printable ASCII"));
  EXPECT_THAT(bad, Not(HasSubstr(key)));
  const std::string from_env = error_of("[llm]\napi_key_env = \"K\"\n", env_of({{"K", key + " "}}));
  EXPECT_THAT(from_env, HasSubstr("($K)"));
  EXPECT_THAT(from_env, Not(HasSubstr(key)));
  auto c =
      parse_llm_config("[llm]\nbase_url = \"https://user:" + key + "@h.example/v1?api-key=" + key +
                           "\"\nmodel = \"m\"\napi_key = \"" + key + "\"\n",
                       kFile, env_of({}));
  ASSERT_TRUE(c) << c.error().message();
  const std::string d = c->defaults.redacted();
  EXPECT_THAT(d, Not(HasSubstr(key)));
  EXPECT_THAT(d, HasSubstr("base_url=https://h.example/v1"));
  EXPECT_THAT(d, HasSubstr("key=<set from file>"));
  EXPECT_EQ(display_url("http://127.0.0.1:8080/v1"), "http://127.0.0.1:8080/v1");
}

TEST(LlmConfig, ReadingAFileChecksItsSizeFirst) {
  TempDir dir("kf_llm_config");
  const auto big = dir.path() / "big.toml";
  {
    std::ofstream out(big);
    out << "[llm]\nmodel = \"m\"\n" << std::string(kMaxLlmConfigBytes, '#');
  }
  auto c = read_llm_config(big, env_of({}));
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message(), HasSubstr("over 262144 bytes"));
  auto missing = read_llm_config(dir.path() / "none.toml", env_of({}));
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("none.toml"));
  const auto ok = dir.path() / "kforge.toml";
  ASSERT_TRUE(write_file_atomic(ok, "[llm]\nmodel = \"m\"\nbase_url = \"http://h/v1\"\n"));
  auto good = read_llm_config(ok, env_of({}));
  ASSERT_TRUE(good) << good.error().message();
  EXPECT_EQ(good->defaults.model, "m");
  EXPECT_TRUE(good->defaults.validate());
}

}  // namespace
}  // namespace kf::llm
