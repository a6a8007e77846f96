#include "store/store.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>

#include "support/fs.h"
#include "unit/store_test_util.h"

namespace kf {
namespace {

using namespace store_test;
using json = nlohmann::json;

TEST(StoreRecords, JsonRoundTripsEveryRecord) {
  RunRecord r = run("r1", "2026-01-01T00:00:00.000Z");
  EXPECT_EQ(RunRecord::from_json(r.to_json())->to_json(), r.to_json());
  CandidateRecord c = candidate("c1");
  EXPECT_EQ(CandidateRecord::from_json(c.to_json())->to_json(), c.to_json());
  EvaluationRecord e = evaluation("c1");
  auto e2 = EvaluationRecord::from_json(e.to_json());
  ASSERT_TRUE(e2);
  EXPECT_EQ(e2->to_json(), e.to_json());
  EXPECT_EQ(e2->threads, 4);
  EXPECT_DOUBLE_EQ(e2->median_s, e.median_s);
  AttemptRecord a = attempt("r1", 3, "c1", e.key);
  EXPECT_EQ(AttemptRecord::from_json(a.to_json())->to_json(), a.to_json());
  MessageRecord m = message("r1", 2, "Plan");
  EXPECT_EQ(MessageRecord::from_json(m.to_json())->to_json(), m.to_json());
}

TEST(StoreRecords, NanIsWrittenAsNullAndReadBackAsNan) {
  AttemptRecord a = attempt("r1", 1, "", "");
  a.speedup = std::numeric_limits<double>::quiet_NaN();
  json j = a.to_json();
  EXPECT_TRUE(j["speedup"].is_null());
  auto back = AttemptRecord::from_json(j);
  ASSERT_TRUE(back);
  EXPECT_TRUE(std::isnan(back->speedup));
}

TEST(StoreRecords, MissingFieldsKeepDefaults) {
  auto r = RunRecord::from_json(json{{"id", "r1"}});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->id, "r1");
  EXPECT_EQ(r->state, "running");
  EXPECT_TRUE(r->options.is_null());
  auto e = EvaluationRecord::from_json(json::object());
  ASSERT_TRUE(e);
  EXPECT_EQ(e->threads, 1);
}

TEST(StoreRecords, WrongTypesNameTheField) {
  auto e = EvaluationRecord::from_json(json{{"threads", "four"}});
  ASSERT_FALSE(e);
  EXPECT_NE(e.error().message().find("evaluation record: field 'threads' must be an integer"),
            std::string::npos)
      << e.error().message();
  auto m = MessageRecord::from_json(json{{"seq", 1}, {"type", 7}});
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message().find("field 'type' must be a string"), std::string::npos);
  auto a = AttemptRecord::from_json(json::array());
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("expected a JSON object"), std::string::npos);
}

TEST(StoreKeys, EvaluationKeyDependsOnEveryPart) {
  std::string k = evaluation_key("c1", "matmul M=64", "fp1", 4);
  EXPECT_EQ(k.size(), 32u);
  EXPECT_EQ(k, evaluation_key("c1", "matmul M=64", "fp1", 4));
  EXPECT_NE(k, evaluation_key("c2", "matmul M=64", "fp1", 4));
  EXPECT_NE(k, evaluation_key("c1", "matmul M=65", "fp1", 4));
  EXPECT_NE(k, evaluation_key("c1", "matmul M=64", "fp2", 4));
  EXPECT_NE(k, evaluation_key("c1", "matmul M=64", "fp1", 8));
  EXPECT_NE(evaluation_key("ab", "c", "m", 1), evaluation_key("a", "bc", "m", 1));
}

TEST(StoreKeys, RunIdsHaveTheDocumentedShape) {
  std::string id = new_run_id();
  EXPECT_TRUE(std::regex_match(id, std::regex(R"(r20\d{6}-\d{6}-[0-9a-f]{4})"))) << id;
  std::set<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.insert(new_run_id());
  EXPECT_GT(ids.size(), 15u);  // random suffix: collisions within a second are rare
}

TEST(StoreKeys, TimestampsAreIsoUtcAndSortByTime) {
  std::string t = utc_timestamp();
  EXPECT_TRUE(std::regex_match(t, std::regex(R"(20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)"))) << t;
  EXPECT_LE(t, utc_timestamp());
}

// Sets environment variables for a scope and puts the old values back.
class ScopedEnv {
 public:
  void set(const char* name, const char* value) {
    if (!saved_.count(name)) {
      const char* old = std::getenv(name);
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) set_back(name, value);
  }

 private:
  static void set_back(const std::string& name, const std::optional<std::string>& v) {
    if (v) {
      setenv(name.c_str(), v->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

TEST(StoreKeys, DefaultStorePathHonoursTheEnvironment) {
  ScopedEnv env;
  env.set("KFORGE_STORE", "/tmp/elsewhere/runs.db");
  EXPECT_EQ(default_store_path(), std::filesystem::path("/tmp/elsewhere/runs.db"));
  env.set("KFORGE_STORE", "");
  env.set("XDG_DATA_HOME", "/tmp/data");
  EXPECT_EQ(default_store_path(), std::filesystem::path("/tmp/data/kforge/runs.db"));
  env.set("XDG_DATA_HOME", nullptr);
  env.set("HOME", "/home/u");
  EXPECT_EQ(default_store_path(), std::filesystem::path("/home/u/.local/share/kforge/runs.db"));
  env.set("HOME", nullptr);
  EXPECT_EQ(default_store_path(), std::filesystem::current_path() / ".kforge" / "runs.db");
}

TEST(StoreKeys, DefaultOutputDirHonoursTheEnvironment) {
  ScopedEnv env;
  env.set("KFORGE_OUT", "/tmp/outs");
  EXPECT_EQ(default_output_dir("r1"), std::filesystem::path("/tmp/outs/r1"));
  env.set("KFORGE_OUT", nullptr);
  env.set("XDG_DATA_HOME", "/tmp/data");
  EXPECT_EQ(default_output_dir("r1"), std::filesystem::path("/tmp/data/kforge/runs/r1"));
  env.set("XDG_DATA_HOME", nullptr);
  env.set("HOME", nullptr);
  EXPECT_EQ(default_output_dir("r1"), std::filesystem::current_path() / "kforge-out" / "r1");
}

}  // namespace
}  // namespace kf
