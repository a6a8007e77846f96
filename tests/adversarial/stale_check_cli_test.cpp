// `kforge check` through the real binary. Must-fail tests for malformed tasks: each kind of
// defect gets exit status 1 or 2 and a message that names the file, where useful the line, and
// what was expected (each case is a copy of the rmsnorm task with one defect). Then the fixtures
// of tests/check_tasks/: a task that passes, and the three kinds of broken task the check exists
// to catch — a broken baseline (it does not compile, or it crashes), a wrong baseline, and a
// tolerance that the task's own reference fails on some seeds — each with its --json report.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void replace_once(std::string& s, const std::string& from, const std::string& to) {
  auto i = s.find(from);
  ASSERT_NE(i, std::string::npos) << from;
  s.replace(i, from.size(), to);
}

struct Defect {
  std::string name;
  std::string file;      // "task.toml" or "reference.cpp"
  std::string from, to;  // the edit that breaks it
  std::string expected;  // part of the error output
};

class MalformedTask : public ::testing::TestWithParam<Defect> {};

TEST_P(MalformedTask, CheckRefusesItWithItsError) {
  const Defect& d = GetParam();
  const fs::path src = testing::source_dir() / "bench/jaxbench/12_rmsnorm";
  const fs::path dir =
      fs::temp_directory_path() / ("kforge-malformed-" + d.name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"task.toml", "reference.cpp", "baseline.cpp"})
    fs::copy_file(src / f, dir / f);
  std::string text = slurp(dir / d.file);
  replace_once(text, d.from, d.to);
  std::ofstream(dir / d.file) << text;

  auto r =
      run_process({.argv = {std::getenv("KFORGE_BIN"), "check", dir.string()}, .timeout_s = 300});
  ASSERT_TRUE(r);
  EXPECT_NE(r->exit_code, 0);
  const std::string all = r->out + r->err;
  EXPECT_NE(all.find(d.expected), std::string::npos) << all;
  if (std::getenv("KFORGE_SHOW_ERRORS"))
    std::fprintf(stderr, "%s: %s\n", d.name.c_str(), all.c_str());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, MalformedTask,
    ::testing::Values(
        Defect{"bad_signature", "task.toml", R"(shape = ["N", "D"], dist)",
               R"(shape = ["N", "Q"], dist)",
               "task.toml:20:1: formula 'Q' uses 'Q', which is not a dim"},
        Defect{"shape_formula_error", "task.toml", R"(flops = "4 * N * D + 4 * N")",
               R"(flops = "4 * N * * D")",
               "task.toml:52:9: bad formula '4 * N * * D' in 'flops': column 9: unexpected '*'"},
        Defect{"tolerance_missing", "task.toml",
               "f32 = { rel_l2 = 1e-5, atol = 1e-6, rtol = 1e-5 }", "",
               "task.toml:45:1: no tolerance for the task's dtype f32"},
        Defect{"reference_does_not_compile", "reference.cpp", "for (int64_t n = 0;",
               "for (int64_t n = 0 oops;", "reference tests  compilation failed"}),
    [](const auto& info) { return info.param.name; });

// ---- The checks on the fixtures -----------------------------------------------------------

struct Checked {
  int exit_code = -1;
  std::string out, err;
  nlohmann::json doc;  // the --json document (null for text runs)
};

Checked kforge_check(const std::string& task, std::vector<std::string> extra, bool json = true) {
  std::vector<std::string> argv = {std::getenv("KFORGE_BIN"), "check",
                                   (testing::source_dir() / "tests/check_tasks" / task).string()};
  if (json) argv.push_back("--json");
  argv.insert(argv.end(), extra.begin(), extra.end());
  auto r = run_process({.argv = argv, .timeout_s = 300});
  KF_CHECK(r.has_value()) << r.error().message();
  Checked c{r->exit_code, r->out, r->err, nullptr};
  if (json) c.doc = nlohmann::json::parse(r->out, nullptr, false);
  return c;
}

// The task's check of `solution` in `scope` ("reference"/"tests", "baseline"/"bench", ...).
nlohmann::json item(const nlohmann::json& doc, const std::string& solution,
                    const std::string& scope) {
  for (const auto& c : doc["tasks"][0]["checks"])
    if (c["solution"] == solution && c["scope"] == scope) return c;
  ADD_FAILURE() << "no " << solution << "/" << scope << " check in " << doc.dump(1);
  return nlohmann::json::object();
}

void expect_passed(const nlohmann::json& c, size_t records) {
  EXPECT_EQ(c["status"], "pass") << c.dump(1);
  EXPECT_EQ(c["verdict"], "ok");
  EXPECT_EQ(c["checks"].size(), records) << c.dump(1);
  ASSERT_TRUE(c["worst_share"].is_number()) << c.dump(1);
  EXPECT_GT(c["worst_share"].get<double>(), 0);
  EXPECT_LT(c["worst_share"].get<double>(), 1);
  EXPECT_NEAR(c["margin"].get<double>(), 1 / c["worst_share"].get<double>(), 1e-9);
  for (const auto& r : c["checks"]) EXPECT_TRUE(r["passed"].get<bool>()) << r.dump();
}

TEST(CheckFixtures, APassingTaskPassesEveryCheckWithItsShare) {
  Checked c = kforge_check("gemv_ok", {"--seed", "11"});
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  ASSERT_FALSE(c.doc.is_discarded()) << c.out;
  EXPECT_EQ(c.doc["schema"], "kforge-check/1");
  EXPECT_EQ(c.doc["seeds"], 3);
  EXPECT_TRUE(c.doc["passed"].get<bool>());
  const nlohmann::json& t = c.doc["tasks"][0];
  EXPECT_EQ(t["name"], "gemv_ok");
  EXPECT_EQ(t["identity"].get<std::string>().size(), 32u);
  EXPECT_EQ(item(c.doc, "task", "load")["status"], "pass");
  EXPECT_EQ(item(c.doc, "te", "tests")["status"], "pass");
  // 3 test shapes x 3 seeds; the bench shape x 2 seeds.
  for (const char* s : {"reference", "baseline"}) {
    SCOPED_TRACE(s);
    expect_passed(item(c.doc, s, "tests"), 9);
    const nlohmann::json bench = item(c.doc, s, "bench");
    expect_passed(bench, 2);
    for (const auto& r : bench["checks"]) EXPECT_EQ(r["shape"], "M=256 K=512");
  }
  EXPECT_EQ(t["checks"].size(), 6u);

  // More seeds: more draws per test shape and at the bench shape.
  Checked more = kforge_check("gemv_ok", {"--seed", "11", "--seeds", "4", "--bench-seeds", "3"});
  EXPECT_EQ(more.exit_code, 0) << more.out;
  expect_passed(item(more.doc, "reference", "tests"), 12);
  expect_passed(item(more.doc, "baseline", "bench"), 3);
}

TEST(CheckFixtures, TextOutputSaysPassOrFailPerCheckAndTheExitStatusFollows) {
  Checked ok = kforge_check("gemv_ok", {}, false);
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("ok   gemv_ok"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("pass    baseline  bench"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("of the tolerance (margin "), std::string::npos) << ok.out;
  Checked bad = kforge_check("wrong_baseline", {}, false);
  EXPECT_EQ(bad.exit_code, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("FAIL wrong_baseline"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("fail    baseline  tests  wrong answer"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("skipped baseline  bench"), std::string::npos) << bad.out;
}

// The reference passes, so the task's checks up to the baseline pass; the baseline's fail.
void expect_reference_passes(const nlohmann::json& doc) {
  expect_passed(item(doc, "reference", "tests"), 9);
  expect_passed(item(doc, "reference", "bench"), 2);
}

TEST(CheckFixtures, ABaselineThatDoesNotCompileFails) {
  Checked c = kforge_check("baseline_does_not_compile", {"--seed", "3"});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  EXPECT_FALSE(c.doc["passed"].get<bool>());
  expect_reference_passes(c.doc);
  const nlohmann::json b = item(c.doc, "baseline", "tests");
  EXPECT_EQ(b["status"], "fail");
  EXPECT_EQ(b["verdict"], "compile_error");
  EXPECT_NE(b["message"].get<std::string>().find("was not declared"), std::string::npos)
      << b.dump(1);
  EXPECT_NE(b["diagnostics"].dump().find("'cblas_sgemv' was not declared"), std::string::npos)
      << b.dump(1);
  EXPECT_EQ(item(c.doc, "baseline", "bench")["status"], "skipped");
}

TEST(CheckFixtures, ABaselineThatCrashesFails) {
  Checked c = kforge_check("baseline_crashes", {"--seed", "3"});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  expect_reference_passes(c.doc);
  const nlohmann::json b = item(c.doc, "baseline", "tests");
  EXPECT_EQ(b["status"], "fail");
  EXPECT_EQ(b["verdict"], "crash");
  EXPECT_NE(b["message"].get<std::string>().find("M=33 K=100"), std::string::npos) << b.dump(1);
  EXPECT_NE(b["message"].get<std::string>().find("SIGSEGV"), std::string::npos) << b.dump(1);
}

TEST(CheckFixtures, AWrongBaselineFailsWithItsShareOfTheTolerance) {
  Checked c = kforge_check("wrong_baseline", {"--seed", "3"});
  EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
  expect_reference_passes(c.doc);
  const nlohmann::json b = item(c.doc, "baseline", "tests");
  EXPECT_EQ(b["status"], "fail");
  EXPECT_EQ(b["verdict"], "wrong_answer");
  // K = 1 drops its only term: y = 0 where the oracle has A x, far outside the bound.
  EXPECT_NE(b["message"].get<std::string>().find("M=1 K=1"), std::string::npos) << b.dump(1);
  ASSERT_TRUE(b["worst_share"].is_number()) << b.dump(1);
  EXPECT_GT(b["worst_share"].get<double>(), 100);
  EXPECT_FALSE(b["checks"].back()["passed"].get<bool>());
}

// The reference sums in f32 against a tolerance a few roundings wide (the fixture's comment has
// the measured rates): over a few seeds its test shapes pass on some and fail on others, and
// the check, with its seeds and the bench shape, fails it on every one.
TEST(CheckFixtures, AToleranceThatFailsOnSomeSeedsIsCaught) {
  int tests_passed = 0, tests_failed = 0;
  for (int seed = 1; seed <= 8; ++seed) {
    SCOPED_TRACE("--seed " + std::to_string(seed));
    Checked c = kforge_check("flaky_tolerance", {"--seed", std::to_string(seed)});
    EXPECT_EQ(c.exit_code, 1) << c.out << c.err;
    EXPECT_FALSE(c.doc["passed"].get<bool>());
    const nlohmann::json tests = item(c.doc, "reference", "tests");
    const nlohmann::json bench = item(c.doc, "reference", "bench");
    const nlohmann::json& failed = tests["status"] == "pass" ? bench : tests;
    (tests["status"] == "pass" ? tests_passed : tests_failed)++;
    EXPECT_EQ(failed["status"], "fail") << c.out;
    EXPECT_EQ(failed["verdict"], "wrong_answer") << failed.dump(1);
    ASSERT_TRUE(failed["worst_share"].is_number()) << failed.dump(1);
    EXPECT_GT(failed["worst_share"].get<double>(), 1) << failed.dump(1);
    EXPECT_FALSE(failed["checks"].back()["passed"].get<bool>());
  }
  EXPECT_GT(tests_passed, 0) << "the test shapes pass on some seeds";
  EXPECT_GT(tests_failed, 0) << "and fail on others";
}

TEST(CheckFixtures, FewerThanTwoSeedsIsAUsageError) {
  for (const char* flag : {"--seeds", "--bench-seeds"}) {
    Checked c = kforge_check("gemv_ok", {flag, "1"});
    EXPECT_NE(c.exit_code, 0);
    EXPECT_NE(c.err.find(flag), std::string::npos) << c.err;
  }
}

TEST(CheckFixtures, WithTimeTheReferenceIsTimedAtTheBenchShape) {
  Checked c = kforge_check("gemv_ok", {"--time"});
  EXPECT_EQ(c.exit_code, 0) << c.out << c.err;
  const nlohmann::json bench = item(c.doc, "reference", "bench");
  ASSERT_TRUE(bench["median_s"].is_number()) << bench.dump(1);
  EXPECT_GT(bench["median_s"].get<double>(), 0);
  // The two draws, then the timing run's warm-up and last timed call, all checked.
  expect_passed(bench, 4);
  EXPECT_TRUE(item(c.doc, "baseline", "bench")["median_s"].is_null());
}

}  // namespace
}  // namespace kf
