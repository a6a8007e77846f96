// The broker's wire format (broker/protocol.h, broker/redis.h): URLs, jobs, results and task
// bundles read from Redis are untrusted; each refusal names what is wrong.
#include <gtest/gtest.h>

#include "broker/protocol.h"
#include "broker/redis.h"
#include "support/fs.h"
#include "support/test_env.h"

namespace kf::broker {
namespace {

TEST(RedisUrl, ParsesHostPortPasswordAndDb) {
  auto u = RedisUrl::parse("redis://:s3cret@10.0.0.5:6380/2");
  ASSERT_TRUE(u.has_value()) << u.error().message();
  EXPECT_EQ(u->host, "10.0.0.5");
  EXPECT_EQ(u->port, 6380);
  EXPECT_EQ(u->password, "s3cret");
  EXPECT_EQ(u->db, 2);
  EXPECT_EQ(u->display(), "redis://:***@10.0.0.5:6380/2");
  EXPECT_EQ(u->without_credentials(), "redis://10.0.0.5:6380/2");
  auto acl = RedisUrl::parse("redis://kforge:pw@host");
  ASSERT_TRUE(acl.has_value());
  EXPECT_EQ(acl->user, "kforge");
  EXPECT_EQ(acl->port, 6379);
  EXPECT_EQ(acl->without_credentials(), "redis://kforge@host:6379/0");
  auto user_only = RedisUrl::parse("redis://kforge@host:7000");
  ASSERT_TRUE(user_only.has_value());
  EXPECT_EQ(user_only->user, "kforge");
  EXPECT_EQ(user_only->password, "");
}

TEST(RedisUrl, RefusesWhatIsNotARedisUrl) {
  EXPECT_NE(RedisUrl::parse("http://host").error().message().find("expected redis://"),
            std::string::npos);
  EXPECT_NE(RedisUrl::parse("redis://host:99999").error().message().find("not in 1-65535"),
            std::string::npos);
  EXPECT_NE(RedisUrl::parse("redis://host:6379/x").error().message().find("not a number"),
            std::string::npos);
}

Job sample_job() {
  EvalOptions o;
  o.threads = 2;
  o.seed = 18446744073709551615ull;
  o.min_time_s = 0.25;
  o.stop_slower_than_s = 0.01;
  o.label = "confirm:3";
  o.origin = "files:a.cpp";
  o.compile.extra_flags = {"-mno-avx512f"};
  Job j{.id = {},
        .scope = "r1",
        .hw_class = "0123456789abcdef",
        .task_hash = "abcd",
        .source = "void f() {}",
        .options = o};
  j.id = Job::make_id(j.scope, j.hw_class, j.task_hash, j.source, eval_options_to_json(o));
  return j;
}

TEST(Job, RoundTripsAndItsIdFollowsItsContents) {
  const Job j = sample_job();
  auto back = Job::from_json(j.to_json());
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->id, j.id);
  EXPECT_EQ(back->options.threads, 2);
  EXPECT_EQ(back->options.seed, 18446744073709551615ull);
  EXPECT_EQ(back->options.label, "confirm:3");
  EXPECT_EQ(back->options.origin, "files:a.cpp");
  EXPECT_EQ(back->options.compile.extra_flags, j.options.compile.extra_flags);
  EXPECT_EQ(eval_options_to_json(back->options), eval_options_to_json(j.options));
  Job other = j;
  other.options.origin = "elsewhere";  // where it came from is not what is judged
  EXPECT_EQ(Job::make_id(other.scope, other.hw_class, other.task_hash, other.source,
                         eval_options_to_json(other.options)),
            j.id);
  other.options.threads = 1;
  EXPECT_NE(Job::make_id(other.scope, other.hw_class, other.task_hash, other.source,
                         eval_options_to_json(other.options)),
            j.id);
}

// Each must-fail job: a field changed, and the text its refusal must hold.
TEST(Job, RefusesMalformedJobsNamingTheField) {
  const nlohmann::json good = sample_job().to_json();
  const std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>> cases = {
      {[](nlohmann::json& j) { j.erase("source"); }, "missing field 'source'"},
      {[](nlohmann::json& j) { j["v"] = 2; }, "'v' = 2 is outside [1, 1]"},
      {[](nlohmann::json& j) { j["id"] = "../x"; }, "'id' is not hex digits"},
      {[](nlohmann::json& j) { j["scope"] = "a b"; }, "'scope' or 'class'"},
      {[](nlohmann::json& j) { j["source"] = 7; }, "'source' is not a string"},
      {[](nlohmann::json& j) { j["source"] = std::string(kMaxSourceBytes + 1, 'x'); },
       "'source' is longer than"},
      {[](nlohmann::json& j) { j["options"]["threads"] = 0; }, "'threads' = 0 is outside"},
      {[](nlohmann::json& j) { j["options"]["run_timeout_s"] = 1e9; }, "'run_timeout_s'"},
      {[](nlohmann::json& j) { j["options"]["seed"] = "12x"; }, "'seed' is not a number"},
      {[](nlohmann::json& j) { j["options"]["backend"] = "tpu"; }, "tpu"},
      {[](nlohmann::json& j) { j["options"]["compile"]["cxx"] = "/bin/sh"; },
       "compiler '/bin/sh' is not g++ or clang++"},
      {[](nlohmann::json& j) { j["options"]["compile"]["libs"] = {"ssl"}; },
       "a job cannot link libraries"},
      {[](nlohmann::json& j) { j["options"]["compile"]["extra_flags"] = {1}; }, "extra_flags"},
  };
  for (const auto& [edit, expected] : cases) {
    nlohmann::json j = good;
    edit(j);
    auto job = Job::from_json(j);
    ASSERT_FALSE(job.has_value()) << expected;
    EXPECT_NE(job.error().message().find(expected), std::string::npos)
        << job.error().message() << "\nexpected: " << expected;
  }
  EXPECT_FALSE(Job::from_json(nlohmann::json::array()).has_value());
}

TEST(JobResult, ReadsAResultOrAnErrorAndNothingElse) {
  JobResult r{.job = "ab", .worker = "w", .fingerprint = "fp", .error = {}, .result = {}};
  r.result.verdict = Verdict::wrong_answer;
  auto back = JobResult::from_json(r.to_json());
  ASSERT_TRUE(back.has_value()) << back.error().message();
  EXPECT_EQ(back->result.verdict, Verdict::wrong_answer);
  r.error = "no task";
  EXPECT_EQ(JobResult::from_json(r.to_json())->error, "no task");
  EXPECT_NE(JobResult::from_json({{"job", "a"}, {"worker", "w"}, {"fingerprint", "f"}})
                .error()
                .message()
                .find("neither 'result' nor 'error'"),
            std::string::npos);
}

TEST(TaskBundle, RefusesNamesThatLeaveTheFolder) {
  for (const char* name : {"../task.toml", "/etc/passwd", "a/../../b", "", "./x"}) {
    const nlohmann::json j = {{"files", {{name, "x"}}}};
    auto b = bundle_from_json(j);
    ASSERT_FALSE(b.has_value()) << name;
    EXPECT_NE(b.error().message().find("leaves the folder"), std::string::npos) << name;
  }
  EXPECT_FALSE(bundle_from_json({{"files", {{"task.toml", 3}}}}).has_value());
  EXPECT_FALSE(bundle_from_json({{"nothing", 1}}).has_value());
}

TEST(TaskBundle, UnpacksToTheSameIdentityAndRefusesAnotherHash) {
  const auto dir = testing::source_dir() / "tests/integration/written_source/task";
  auto t = load_identified_task(dir);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  auto b = bundle_task(dir, t->identity);
  ASSERT_TRUE(b.has_value()) << b.error().message();
  auto round = bundle_from_json(bundle_to_json(*b));
  ASSERT_TRUE(round.has_value());
  const auto out =
      std::filesystem::temp_directory_path() / ("kf_bundle_" + std::to_string(::getpid()));
  auto ok = unpack_task(*round, out / "a", t->identity.hash);
  EXPECT_TRUE(ok.has_value()) << ok.error().message();
  auto wrong = unpack_task(*round, out / "b", std::string(32, '0'));
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message().find("its files do not match its hash"), std::string::npos);
  std::filesystem::remove_all(out);
}

}  // namespace
}  // namespace kf::broker
