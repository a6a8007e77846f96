// The events of a real run (`kforge optimize --events FILE`, modes/events.h): every line validates
// against the documented schema (docs/events.schema.json, checked by the jsonschema library), and
// the events tell the run's story consistently: it starts, each evaluation is one attempt_judged
// in order, each new best names a candidate judged ok before it, and it ends with the counts and
// best that the store holds. A resumed run appends to the same file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "modes/events.h"
#include "support/fs.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

std::vector<nlohmann::json> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

// Runs the schema check; "" when every line is valid.
std::string schema_errors(const fs::path& events) {
  auto r = run_process(
      {.argv = {"python3", (testing::source_dir() / "tests/support/validate_jsonl.py").string(),
                (testing::source_dir() / "docs/events.schema.json").string(), events.string()},
       .timeout_s = 60});
  if (!r) return r.error().message();
  return r->ok() ? "" : r->out + r->err;
}

TEST(OptimizeEvents, ARealRunsEventsValidateAndTellTheRun) {
  TempDir tmp("kforge-events");
  const fs::path events = tmp.path() / "run.events.jsonl";
  auto r = run_process(
      {.argv = {std::getenv("KFORGE_BIN"), "optimize",
                (testing::source_dir() / "tests/golden/tasks/f64_layernorm").string(),
                "--budget-evals", "5", "--tune-budget", "1", "--min-time", "0.05", "--no-profile",
                "--stop-at", "100", "--store", (tmp.path() / "runs.db").string(), "--out",
                (tmp.path() / "out").string(), "--events", events.string()},
       .timeout_s = 600});
  ASSERT_TRUE(r) << r.error().message();
  ASSERT_TRUE(r->ok()) << r->out << r->err;
  EXPECT_EQ(schema_errors(events), "");

  const std::vector<nlohmann::json> ev = read_lines(events);
  ASSERT_GE(ev.size(), 3u);
  EXPECT_EQ(ev.front()["type"], "run_started");
  EXPECT_EQ(ev.back()["type"], "run_ended");
  const std::string run = ev.front()["run"];
  int judged = 0, finals = 0, last_seq = 0, last_eval = 0;
  double last_time = 0, final_vs_reference = 0;
  std::set<std::string> ok_candidates;
  std::string best;
  for (const auto& e : ev) {
    EXPECT_EQ(e["schema"], kEventsSchema);
    EXPECT_EQ(e["run"], run);
    EXPECT_GE(e["time"].get<double>(), last_time) << "in time order";
    last_time = e["time"];
    if (e["type"] == "attempt_judged") {
      ++judged;
      finals += e["kind"] == "final";
      EXPECT_GT(e["seq"].get<int>(), last_seq);
      EXPECT_EQ(e["evaluation"].get<int>(), last_eval + 1);
      last_seq = e["seq"];
      last_eval = e["evaluation"];
      if (e["verdict"] == "ok") ok_candidates.insert(e["candidate"].get<std::string>());
      // The first timed attempt timed the reference beside it: every timed attempt from then
      // on says how it compares with the reference.
      if (e.contains("median_s")) {
        EXPECT_TRUE(e.contains("vs_reference")) << e.dump();
      }
      if (e["kind"] == "final") final_vs_reference = e.value("vs_reference", 0.0);
    }
    if (e["type"] == "new_best") {
      EXPECT_TRUE(ok_candidates.count(e["candidate"].get<std::string>()))
          << "a best is a candidate judged ok before: " << e.dump();
      best = e["candidate"];
    }
  }
  const nlohmann::json& end = ev.back();
  EXPECT_EQ(end["evaluations"], judged);
  EXPECT_EQ(judged - finals, 5) << "the budget, then the final run";
  EXPECT_GE(finals, 1);
  EXPECT_EQ(end["best_candidate"], best) << "the last new_best is the run's best";
  EXPECT_EQ(end["final_verdict"], "ok");
  auto summary = read_file(tmp.path() / "out" / "summary.json");
  ASSERT_TRUE(summary);
  EXPECT_EQ(nlohmann::json::parse(*summary)["best"]["key"], best);
  // The final run's speedup is the one it measured side by side.
  EXPECT_EQ(final_vs_reference,
            nlohmann::json::parse(*summary)["final"]["vs_reference"]["median"].get<double>());

  // The console printed one progress line per evaluation on stderr, as the events say.
  int lines = 0;
  std::istringstream out(r->err);
  for (std::string l; std::getline(out, l);) lines += l.starts_with("[");
  EXPECT_EQ(lines, judged);
}

TEST(OptimizeEvents, AnUnwritableEventsFileIsAnErrorBeforeTheRun) {
  TempDir tmp("kforge-events-unwritable");
  auto r = run_process(
      {.argv = {std::getenv("KFORGE_BIN"), "optimize",
                (testing::source_dir() / "tests/golden/tasks/f64_layernorm").string(), "--store",
                (tmp.path() / "runs.db").string(), "--events", "/nonexistent-dir/events.jsonl"},
       .timeout_s = 60});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->exit_code, 2);
  EXPECT_NE(r->err.find("cannot open /nonexistent-dir/events.jsonl"), std::string::npos) << r->err;
}

// The schema is strict: a line with a field it does not document, or a wrong type, fails it.
TEST(OptimizeEvents, TheSchemaRefusesWhatItDoesNotDocument) {
  TempDir tmp("kforge-events-schema");
  const fs::path f = tmp.path() / "bad.jsonl";
  nlohmann::json good = event_json(Note{"r1", "hello"}, 1.0);
  ASSERT_TRUE(write_file_atomic(f, good.dump() + "\n").ok());
  EXPECT_EQ(schema_errors(f), "");
  nlohmann::json extra = good;
  extra["surprise"] = 1;
  nlohmann::json wrong = event_json(AttemptJudged{.run_id = "r1",
                                                  .seq = 1,
                                                  .evaluation = 1,
                                                  .kind = "plan",
                                                  .candidate = "k",
                                                  .verdict = "ok"},
                                    1.0);
  wrong["seq"] = "one";
  for (const auto& bad : {extra, wrong}) {
    ASSERT_TRUE(write_file_atomic(f, bad.dump() + "\n").ok());
    EXPECT_NE(schema_errors(f), "") << bad.dump();
  }
}

}  // namespace
}  // namespace kf
