// `kforge report` on a real run: the page is written where the run's outputs are, and headless
// Chromium (Debian's chromium, installed by scripts/install-deps.sh) parses it into the graph,
// the curve and the code, and takes a screenshot of it, kept as a test artifact in
// build/.../test-artifacts/report.png for a person to look at.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "store/sqlite_store.h"
#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/subprocess.h"
#include "support/test_env.h"
#include "support/text_count.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::run_kforge;

const fs::path kTask = testing::source_dir() / "tests/golden/tasks/f64_layernorm";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_report_cli");
}

using testing::count;

// Chromium headless on a local file: its parsed DOM (--dump-dom) or a screenshot.
Expected<ProcessResult> chromium(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"chromium",      "--headless",        "--no-sandbox",
                                   "--disable-gpu", "--hide-scrollbars", "--no-first-run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process({.argv = argv, .timeout_s = 120});
}

TEST(ReportCli, ARealRunsPageOpensInChromiumWithTheGraphTheCurveAndTheCode) {
  const fs::path db = temp_root() / "runs.db", out = temp_root() / "out";
  ProcessResult r =
      run_kforge({"optimize", kTask.string(), "--budget-evals", "4", "--no-profile", "--min-time",
                  "0.05", "--stop-at", "100", "--store", db.string(), "--out", out.string(), "-q"},
                 300);
  ASSERT_TRUE(r.ok()) << describe(r);
  const std::string run = nlohmann::json::parse(*read_file(out / "summary.json"))["run"];

  // By default the page goes beside the run's other outputs.
  ProcessResult rep = run_kforge({"report", run.substr(0, run.size() - 2), "--store", db.string()});
  ASSERT_TRUE(rep.ok()) << describe(rep);
  const fs::path page = out / "report.html";
  EXPECT_NE(rep.out.find("wrote " + page.string()), std::string::npos) << rep.out;
  auto html = read_file(page);
  ASSERT_TRUE(html) << html.error().message();
  EXPECT_NE(html->find("<svg class=\"tree\""), std::string::npos);
  EXPECT_NE(html->find("<svg class=\"curve\""), std::string::npos);
  EXPECT_NE(html->find("<pre class=\"code\">"), std::string::npos);
  EXPECT_NE(html->find("vs the reference"), std::string::npos) << "the final run's card";

  if (first_line_of({"chromium", "--version"}).empty())
    GTEST_SKIP() << "chromium is not installed (scripts/install-deps.sh installs it)";
  // The browser's own parse of the page: the pictures are elements, the code is there.
  auto dom = chromium({"--dump-dom", "file://" + page.string()});
  ASSERT_TRUE(dom) << dom.error().message();
  ASSERT_TRUE(dom->ok()) << dom->err;
  EXPECT_NE(dom->out.find("<svg class=\"tree\""), std::string::npos) << dom->out.substr(0, 2000);
  EXPECT_NE(dom->out.find("<polyline"), std::string::npos) << "the best-so-far line";
  // A node per candidate measured and a dot per timed evaluation, the final run's left out: a
  // confirmation re-times a candidate already in the graph, so the two counts can differ.
  auto store = SqliteStore::open(db);
  ASSERT_TRUE(store) << store.error().message();
  auto attempts = (*store)->attempts(run);
  ASSERT_TRUE(attempts) << attempts.error().message();
  std::set<std::string> candidates;
  size_t timed = 0;
  for (const AttemptRecord& a : *attempts) {
    if (a.kind == "final") continue;
    if (!a.candidate_key.empty() && a.verdict != "duplicate") candidates.insert(a.candidate_key);
    timed += !a.evaluation_key.empty() && a.verdict == "ok";
  }
  EXPECT_GE(timed, 4u) << "the budget's four evaluations";
  EXPECT_EQ(count(dom->out, "<circle"), candidates.size() + timed)
      << "a node per candidate and a dot per timed evaluation";
  EXPECT_NE(dom->out.find("<span class=\"k\">"), std::string::npos) << "highlighted code";

  const fs::path artifacts = fs::path(KFORGE_TEST_BINARY_DIR) / "test-artifacts";
  fs::create_directories(artifacts);
  const fs::path shot = artifacts / "report.png";
  fs::remove(shot);
  auto taken = chromium(
      {"--screenshot=" + shot.string(), "--window-size=1280,2200", "file://" + page.string()});
  ASSERT_TRUE(taken) << taken.error().message();
  ASSERT_TRUE(taken->ok()) << taken->err;
  auto png = read_file(shot);
  ASSERT_TRUE(png) << png.error().message();
  EXPECT_EQ(png->substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  // A blank page of this size compresses to a few KiB; the report's text, pictures and code
  // take tens.
  EXPECT_GT(png->size(), 40u << 10) << shot;
}

}  // namespace
}  // namespace kf
