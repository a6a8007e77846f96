// The judge as the agents see it (agents/judge.h): candidate identity, and the recording and
// recorded (simulation) judges. A fake inner judge stands in for the harness, so nothing here
// compiles or times a kernel.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "agents/judge.h"
#include "support/fs.h"

namespace kf::agents {
namespace {

namespace fs = std::filesystem;

// A directory of its own per test, removed at the end.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() / ("kf_judge_" + std::string(info->test_suite_name()) + "_" +
                                         info->name() + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

RunResult fixed_result(double median_s) {
  RunResult r;
  r.verdict = Verdict::ok;
  r.message = "ok: 7 checks passed";
  r.task = "fake";
  r.threads = 1;
  r.checks.push_back({.shape = "N=3", .seed = 11, .passed = true});
  Timing t;
  t.samples = 5;
  t.median_s = median_s;
  t.min_s = median_s * 0.9;
  t.per_run_s = {median_s, median_s * 0.9};
  r.timing = t;
  Roofline f;
  f.bound = "memory";
  f.fraction = 0.25;
  r.roofline = f;
  return r;
}

// Answers every candidate with a fixed result; counts its calls.
class FakeJudge : public Judge {
 public:
  explicit FakeJudge(RunResult r) : result_(std::move(r)) {}
  Expected<RunResult> judge(const Task&, const std::string& source,
                            const EvalOptions& options) override {
    ++calls;
    if (fail) return Status::error("fake environment failure");
    RunResult r = result_;
    r.threads = options.threads;
    r.message = "judged " + std::to_string(source.size()) + " bytes";
    return r;
  }
  std::string name() const override { return "fake"; }

  int calls = 0;
  bool fail = false;

 private:
  RunResult result_;
};

Task fake_task() {
  Task t;
  t.name = "fake";
  return t;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST(CandidateKey, IgnoresTrailingSpacesAndLineEndings) {
  CompileOptions c;
  const std::string base = "int f() {\n  return 1;\n}\n";
  const std::string key = candidate_key(base, c);
  EXPECT_EQ(key.size(), 32u);
  EXPECT_EQ(candidate_key("int f() {  \n  return 1;\t\n}\n", c), key);
  EXPECT_EQ(candidate_key("int f() {\r\n  return 1;\r\n}\r\n", c), key);
  EXPECT_EQ(candidate_key("int f() {\n  return 1;\n}", c), key) << "a missing final newline";
  EXPECT_EQ(candidate_key(base, c), key) << "stable";
}

TEST(CandidateKey, DistinguishesContentAndFlags) {
  CompileOptions c;
  const std::string base = "int f() {\n  return 1;\n}\n";
  const std::string key = candidate_key(base, c);
  EXPECT_NE(candidate_key("int f() {\n  return 2;\n}\n", c), key);
  EXPECT_NE(candidate_key("int f() {\n return 1;\n}\n", c), key) << "leading spaces count";
  EXPECT_NE(candidate_key("int f() {\n\n  return 1;\n}\n", c), key) << "blank lines count";
  CompileOptions flagged;
  flagged.extra_flags = {"-funroll-loops"};
  EXPECT_NE(candidate_key(base, flagged), key);
  CompileOptions other_flag;
  other_flag.extra_flags = {"-fno-tree-vectorize"};
  EXPECT_NE(candidate_key(base, other_flag), candidate_key(base, flagged));
}

TEST(RecordingJudge, PassesResultsThroughAndAppendsOneLineEach) {
  TempDir dir;
  const fs::path rec = dir.path() / "run.jsonl";
  FakeJudge inner(fixed_result(1e-3));
  RecordingJudge judge(inner, rec.string());
  EXPECT_EQ(judge.name(), "fake+recording");
  Task task = fake_task();
  EvalOptions o;
  auto a = judge.judge(task, "// a\n", o);
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->message, "judged 5 bytes");
  o.threads = 4;
  auto b = judge.judge(task, "// bb\n", o);
  ASSERT_TRUE(b);
  EXPECT_EQ(inner.calls, 2);

  const auto lines = lines_of(rec);
  ASSERT_EQ(lines.size(), 2u);
  auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["candidate"], candidate_key("// a\n", o.compile));
  EXPECT_EQ(first["threads"], 1);
  EXPECT_EQ(first["result"], a->to_json());
  auto second = nlohmann::json::parse(lines[1]);
  EXPECT_EQ(second["candidate"], candidate_key("// bb\n", o.compile));
  EXPECT_EQ(second["threads"], 4);
}

TEST(RecordingJudge, AnInnerFailureIsPassedOnAndNotRecorded) {
  TempDir dir;
  const fs::path rec = dir.path() / "run.jsonl";
  FakeJudge inner(fixed_result(1e-3));
  inner.fail = true;
  RecordingJudge judge(inner, rec.string());
  Task task = fake_task();
  auto r = judge.judge(task, "// a\n", {});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message(), "fake environment failure");
  EXPECT_TRUE(lines_of(rec).empty());
}

TEST(RecordingJudge, AnUnwritableRecordingIsAnError) {
  TempDir dir;
  FakeJudge inner(fixed_result(1e-3));
  const std::string path = (dir.path() / "no_such_dir" / "run.jsonl").string();
  RecordingJudge judge(inner, path);
  Task task = fake_task();
  auto r = judge.judge(task, "// a\n", {});
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message().find("cannot append to the recording " + path), std::string::npos)
      << r.error().message();
}

TEST(RecordedJudge, ReplaysWhatWasRecordedIdentically) {
  TempDir dir;
  const fs::path rec = dir.path() / "run.jsonl";
  FakeJudge inner(fixed_result(2.5e-3));
  RecordingJudge recording(inner, rec.string());
  Task task = fake_task();
  EvalOptions one, four;
  four.threads = 4;
  auto a1 = recording.judge(task, "// a\n", one);
  auto a4 = recording.judge(task, "// a\n", four);
  auto b1 = recording.judge(task, "// b\n", one);
  ASSERT_TRUE(a1 && a4 && b1);

  auto sim = RecordedJudge::open(rec.string());
  ASSERT_TRUE(sim) << sim.error().message();
  EXPECT_EQ((*sim)->name(), "recorded");
  // The same source up to trailing spaces and CRLF is the same candidate.
  auto r = (*sim)->judge(task, "// a  \r\n", one);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->to_json(), a1->to_json());
  r = (*sim)->judge(task, "// a\n", four);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->to_json(), a4->to_json());
  EXPECT_EQ(r->threads, 4);
  r = (*sim)->judge(task, "// b\n", one);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->to_json(), b1->to_json());
  // Replaying is deterministic: the same answer every time.
  auto again = (*sim)->judge(task, "// b\n", one);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->to_json(), r->to_json());
  EXPECT_EQ(inner.calls, 3) << "the recorded judge never calls a real judge";
}

// One candidate measured several times: by label (a final run, a confirmation), and under one
// label in the order recorded, so a replay (or a resumed replay) sees each measurement again.
TEST(RecordedJudge, RepeatedMeasurementsReplayByLabelThenInOrder) {
  TempDir dir;
  const fs::path rec = dir.path() / "run.jsonl";
  Task task = fake_task();
  EvalOptions plain, final_run, confirm;
  final_run.label = "final";
  confirm.label = "confirm:5";
  {
    FakeJudge first(fixed_result(1e-3)), second(fixed_result(2e-3)), third(fixed_result(3e-3)),
        fourth(fixed_result(4e-3));
    ASSERT_TRUE(RecordingJudge(first, rec.string()).judge(task, "// a\n", plain));
    ASSERT_TRUE(RecordingJudge(second, rec.string()).judge(task, "// a\n", confirm));
    ASSERT_TRUE(RecordingJudge(third, rec.string()).judge(task, "// a\n", final_run));
    ASSERT_TRUE(RecordingJudge(fourth, rec.string()).judge(task, "// a\n", plain));
  }
  ASSERT_NE(lines_of(rec)[1].find("\"label\":\"confirm:5\""), std::string::npos)
      << lines_of(rec)[1];
  auto sim = RecordedJudge::open(rec.string());
  ASSERT_TRUE(sim) << sim.error().message();
  auto median = [&](const EvalOptions& o) {
    auto r = (*sim)->judge(task, "// a\n", o);
    KF_CHECK(r && r->timing);
    return r->timing->median_s;
  };
  EXPECT_DOUBLE_EQ(median(final_run), 3e-3);
  EXPECT_DOUBLE_EQ(median(confirm), 2e-3);
  EXPECT_DOUBLE_EQ(median(plain), 1e-3);
  EXPECT_DOUBLE_EQ(median(plain), 4e-3);
  EXPECT_DOUBLE_EQ(median(plain), 4e-3) << "the last one again once they are used up";
}

TEST(RecordedJudge, AnUnknownCandidateIsACrashVerdict) {
  TempDir dir;
  const fs::path rec = dir.path() / "run.jsonl";
  FakeJudge inner(fixed_result(1e-3));
  RecordingJudge recording(inner, rec.string());
  Task task = fake_task();
  ASSERT_TRUE(recording.judge(task, "// a\n", {}));
  auto sim = RecordedJudge::open(rec.string());
  ASSERT_TRUE(sim);

  auto r = (*sim)->judge(task, "// never recorded\n", {});
  ASSERT_TRUE(r) << "a missing measurement is a verdict, not an error";
  EXPECT_EQ(r->verdict, Verdict::crash);
  EXPECT_NE(r->message.find("no recorded measurement"), std::string::npos) << r->message;
  EXPECT_EQ(r->task, "fake");
  EXPECT_FALSE(r->timing.has_value());

  // Recorded with one thread: another thread count is another measurement.
  EvalOptions two;
  two.threads = 2;
  r = (*sim)->judge(task, "// a\n", two);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::crash);
  EXPECT_EQ(r->threads, 2);
}

TEST(RecordedJudge, BlankLinesAreSkipped) {
  TempDir dir;
  const fs::path rec = dir.path() / "run.jsonl";
  const std::string key = candidate_key("// a\n", {});
  nlohmann::json line = {
      {"candidate", key}, {"threads", 1}, {"result", fixed_result(1e-3).to_json()}};
  ASSERT_TRUE(write_file_atomic(rec, "\n" + line.dump() + "\n\n").ok());
  auto sim = RecordedJudge::open(rec.string());
  ASSERT_TRUE(sim) << sim.error().message();
  Task task = fake_task();
  auto r = (*sim)->judge(task, "// a\n", {});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->verdict, Verdict::ok);
  ASSERT_TRUE(r->timing);
  EXPECT_DOUBLE_EQ(r->timing->median_s, 1e-3);
}

TEST(RecordedJudge, AMissingFileIsAnError) {
  TempDir dir;
  const std::string path = (dir.path() / "missing.jsonl").string();
  auto sim = RecordedJudge::open(path);
  ASSERT_FALSE(sim);
  EXPECT_EQ(sim.error().message(), "cannot read the recording " + path);
}

// Must-fail: each malformed recording names the file and the line.
struct BadRecording {
  const char* name;
  const char* bad_line;
  const char* error;  // after "PATH:2: "
};

class RecordedJudgeMalformed : public ::testing::TestWithParam<BadRecording> {};

TEST_P(RecordedJudgeMalformed, NamesFileAndLine) {
  TempDir dir;
  const fs::path rec = dir.path() / "run.jsonl";
  nlohmann::json good = {{"candidate", candidate_key("// a\n", {})},
                         {"threads", 1},
                         {"result", fixed_result(1e-3).to_json()}};
  ASSERT_TRUE(
      write_file_atomic(rec, good.dump() + "\n" + GetParam().bad_line + "\n" + good.dump() + "\n")
          .ok());
  auto sim = RecordedJudge::open(rec.string());
  ASSERT_FALSE(sim);
  EXPECT_EQ(sim.error().message(), rec.string() + ":2: " + GetParam().error);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, RecordedJudgeMalformed,
    ::testing::Values(
        BadRecording{"not_json", "{\"candidate\": ", "expected a recorded result"},
        BadRecording{"not_an_object", "[1, 2]", "expected a recorded result"},
        BadRecording{"no_candidate", "{\"threads\": 1, \"result\": {\"verdict\": \"ok\"}}",
                     "expected a recorded result"},
        BadRecording{"no_result", "{\"candidate\": \"abc\", \"threads\": 1}",
                     "expected a recorded result"},
        BadRecording{
            "unknown_verdict",
            "{\"candidate\": \"abc\", \"threads\": 1, \"result\": {\"verdict\": \"fast\"}}",
            "run result: unknown verdict 'fast'"},
        BadRecording{"candidate_not_a_string",
                     "{\"candidate\": 5, \"threads\": 1, \"result\": {\"verdict\": \"ok\"}}",
                     "expected a recorded result"},
        BadRecording{
            "threads_not_a_number",
            "{\"candidate\": \"abc\", \"threads\": \"1\", \"result\": {\"verdict\": \"ok\"}}",
            "expected a recorded result"},
        BadRecording{"result_without_verdict",
                     "{\"candidate\": \"abc\", \"result\": {\"message\": \"hi\"}}",
                     "run result: missing field 'verdict'"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace kf::agents
