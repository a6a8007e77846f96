// `--json` on every subcommand (docs/json.md): each command's real output on a small task is one
// JSON document that its JSON Schema accepts (tests/support/validate_json.py, with the shared
// parts of docs/schemas/ resolvable), and it holds the values the command produced; every
// subcommand `kforge --help` lists has a row in docs/json.md and a schema file (llm-serve, a
// server, excepted), so a new command without a schema fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "llm/replay_server.h"
#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::run_kforge;

const fs::path kSource = testing::source_dir();
const fs::path kTask = kSource / "tests/integration/written_source/task";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_json_cli");
}

// A fresh path under the test's temporary folder.
fs::path temp_path(const std::string& name) {
  static int n = 0;
  return temp_root() / (std::to_string(++n) + "_" + name);
}

// Whether `doc` (a file) is valid against `schema` (relative to docs/); "" when it is, else the
// validator's messages.
std::string schema_errors(const std::string& schema, const fs::path& doc) {
  auto r = run_process({.argv = {"python3", (kSource / "tests/support/validate_json.py").string(),
                                 (kSource / "docs" / schema).string(), doc.string(),
                                 (kSource / "docs/schemas").string(), (kSource / "docs").string()},
                        .timeout_s = 60});
  if (!r) return r.error().message();
  return r->ok() ? "" : r->out + r->err + "(exit " + std::to_string(r->exit_code) + ")";
}

// `kforge ARGS`, expected to exit with `exit_code` and print one JSON document on stdout that
// `schema` accepts; returns the document (null after a failure, which is reported).
nlohmann::json json_of(const std::vector<std::string>& args, const std::string& schema,
                       int exit_code = 0, ProcessResult* result = nullptr) {
  ProcessResult r = run_kforge(args, 300);
  if (result) *result = r;
  EXPECT_EQ(r.exit_code, exit_code) << describe(r);
  const fs::path out = temp_path("out.json");
  KF_CHECK(write_file_atomic(out, r.out).ok());
  nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    ADD_FAILURE() << "stdout is not one JSON document: " << describe(r);
    return nullptr;
  }
  const std::string errors = schema_errors(schema, out);
  EXPECT_EQ(errors, "") << schema << " rejects the output of kforge " << args.front() << ":\n"
                        << j.dump(2).substr(0, 4000);
  return j;
}

nlohmann::json read_json(const fs::path& p) {
  auto text = read_file(p);
  KF_CHECK(text.has_value()) << text.error().message();
  return nlohmann::json::parse(*text);
}

// A schedule for the small task: the output's inner loop split and vectorized.
fs::path small_schedule() {
  const fs::path p = temp_path("t.sched");
  KF_CHECK(write_file_atomic(p,
                             "# y's rows in 16 lanes\nsplit y.d d.o d.i 16\n"
                             "vectorize y.d.i 16\n")
               .ok());
  return p;
}

// The subcommands `kforge --help` lists, in its order.
std::vector<std::string> listed_subcommands() {
  ProcessResult r = run_kforge({"--help"});
  KF_CHECK(r.ok()) << describe(r);
  std::vector<std::string> names;
  std::istringstream in(r.out.substr(r.out.find("Subcommands:")));
  const std::regex row(R"(^  ([a-z][a-z-]*)\s{2,}\S.*)");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, m, row)) names.push_back(m[1]);
  return names;
}

// docs/json.md's table: command -> {schema name, schema file relative to docs/}.
std::map<std::string, std::pair<std::string, std::string>> documented_schemas() {
  auto text = read_file(kSource / "docs/json.md");
  KF_CHECK(text.has_value()) << text.error().message();
  std::map<std::string, std::pair<std::string, std::string>> rows;
  std::istringstream in(*text);
  const std::regex row(R"(^\| `kforge ([a-z-]+)` \| `([^`]+)` \| \[[^\]]*\]\(([^)]+)\) \|.*)");
  std::smatch m;
  for (std::string line; std::getline(in, line);)
    if (std::regex_match(line, m, row)) rows[m[1]] = {m[2], m[3]};
  return rows;
}

TEST(JsonCli, EverySubcommandHasADocumentedSchemaAndAJsonFlag) {
  const std::vector<std::string> commands = listed_subcommands();
  ASSERT_GE(commands.size(), 14u) << "the help's subcommand list did not parse";
  const auto rows = documented_schemas();
  std::set<std::string> listed(commands.begin(), commands.end());
  for (const auto& [command, row] : rows)
    EXPECT_TRUE(listed.count(command))
        << "docs/json.md has a row for kforge " << command << ", which --help does not list";
  for (const std::string& command : commands) {
    ProcessResult help = run_kforge({command, "--help"});
    ASSERT_TRUE(help.ok()) << describe(help);
    // Servers (and a worker, which serves jobs): no result, no --json.
    if (command == "llm-serve" || command == "serve" || command == "worker") {
      EXPECT_FALSE(rows.count(command));
      EXPECT_EQ(help.out.find("--json"), std::string::npos) << help.out;
      continue;
    }
    ASSERT_TRUE(rows.count(command)) << "kforge " << command << " has no row in docs/json.md";
    const auto& [name, file] = rows.at(command);
    EXPECT_TRUE(std::regex_match(name, std::regex("kforge-" + command + "/[1-9][0-9]*"))) << name;
    ASSERT_TRUE(fs::exists(kSource / "docs" / file)) << file;
    const nlohmann::json schema = read_json(kSource / "docs" / file);
    EXPECT_EQ(schema["properties"]["schema"]["const"], name) << file;
    EXPECT_NE(help.out.find("--json"), std::string::npos) << "kforge " << command << " --help";
    EXPECT_NE(help.out.find(name), std::string::npos)
        << "kforge " << command << " --help should name its schema:\n"
        << help.out;
  }
}

TEST(JsonCli, EvalOfTheReferenceOfAWrongKernelAndOfAProfiledSchedule) {
  const std::string task = kTask.string();
  nlohmann::json ok =
      json_of({"eval", task, (kTask / "reference.cpp").string(), "--json", "--min-time", "0.05"},
              "schemas/eval.schema.json");
  EXPECT_EQ(ok["schema"], "kforge-eval/1");
  EXPECT_EQ(ok["verdict"], "ok");
  EXPECT_EQ(ok["task"], "written_rmsnorm");
  EXPECT_EQ(ok["shape"], "N=256 D=2048 eps=1e-06");
  EXPECT_GT(ok["timing"]["median_s"].get<double>(), 0);
  EXPECT_GT(ok["speedup"]["median"].get<double>(), 0);  // the reference, timed beside itself
  EXPECT_FALSE(ok.contains("profile"));
  ASSERT_FALSE(ok["checks"].empty());
  for (const auto& c : ok["checks"]) EXPECT_TRUE(c["passed"].get<bool>()) << c.dump();

  const fs::path wrong = kSource / "tests/integration/written_source/sources/b_wrong_mean.cpp";
  nlohmann::json bad =
      json_of({"eval", task, wrong.string(), "--json", "--no-time"}, "schemas/eval.schema.json", 1);
  EXPECT_EQ(bad["verdict"], "wrong_answer");
  EXPECT_FALSE(bad.contains("timing"));

  nlohmann::json prof = json_of({"eval", task, small_schedule().string(), "--json", "--profile",
                                 "--no-reference", "--min-time", "0.05"},
                                "schemas/eval.schema.json");
  EXPECT_EQ(prof["verdict"], "ok");
  ASSERT_TRUE(prof.contains("profile")) << prof.dump(2).substr(0, 2000);
  EXPECT_EQ(prof["profile"]["task"], "written_rmsnorm");
  EXPECT_FALSE(prof["profile"]["findings"].empty());
}

TEST(JsonCli, DoctorDescribesTheMachineItsCacheAndTheCpuBackend) {
  nlohmann::json j = json_of({"doctor", "--json"}, "schemas/doctor.schema.json");
  EXPECT_EQ(j["schema"], "kforge-doctor/1");
  EXPECT_GE(j["cores"].get<int>(), 1);
  EXPECT_GT(j["peak_gflops_1t"].get<double>(), 0);
  const fs::path cache = j["cache_file"].get<std::string>();
  EXPECT_TRUE(fs::exists(cache)) << cache;
  EXPECT_NE(cache.filename().string().find(j["fingerprint"].get<std::string>()), std::string::npos);
  ASSERT_FALSE(j["backends"].empty());
  EXPECT_EQ(j["backends"][0]["name"], "cpu");
}

TEST(JsonCli, LowerGivesTheSourceAndTheScheduleAsFields) {
  const fs::path sched = small_schedule(), out = temp_path("k.cpp");
  nlohmann::json j =
      json_of({"lower", kTask.string(), "-s", sched.string(), "--target", "avx2", "--json"},
              "schemas/lower.schema.json");
  EXPECT_EQ(j["schema"], "kforge-lower/1");
  EXPECT_EQ(j["task"], "written_rmsnorm");
  EXPECT_EQ(j["target"], "avx2");
  EXPECT_EQ(j["output"], nullptr);
  const nlohmann::json& s = j["schedule"];
  EXPECT_EQ(s["file"], sched.string());
  EXPECT_EQ(s["text"], "split y.d d.o d.i 16\nvectorize y.d.i 16\n");
  ASSERT_EQ(s["steps"].size(), 2u);
  EXPECT_EQ(s["steps"][0]["primitive"], "split");
  EXPECT_EQ(s["steps"][0]["args"], nlohmann::json({"y.d", "d.o", "d.i", "16"}));
  EXPECT_EQ(s["steps"][1]["line"], 3);
  const std::string source = j["source"];
  EXPECT_NE(source.find("schedule-hash " + s["hash"].get<std::string>()), std::string::npos);
  EXPECT_NE(source.find("rmsnorm("), std::string::npos);

  // The text output is the source itself; with -o the file holds the document's source.
  ProcessResult text =
      run_kforge({"lower", kTask.string(), "-s", sched.string(), "--target", "avx2"});
  ASSERT_TRUE(text.ok()) << describe(text);
  EXPECT_EQ(text.out, source);
  nlohmann::json written =
      json_of({"lower", kTask.string(), "--json", "-o", out.string()}, "schemas/lower.schema.json");
  EXPECT_EQ(written["output"], out.string());
  EXPECT_EQ(written["schedule"]["file"], nullptr);  // the default schedule
  EXPECT_EQ(written["schedule"]["steps"].size(), 0u);
  auto file = read_file(out);
  ASSERT_TRUE(file.has_value()) << file.error().message();
  EXPECT_EQ(*file, written["source"].get<std::string>());
}

TEST(JsonCli, CheckAndNewDescribeTheTaskAndTheSkeleton) {
  nlohmann::json c = json_of({"check", kTask.string(), "--json"}, "schemas/check.schema.json");
  EXPECT_EQ(c["schema"], "kforge-check/1");
  EXPECT_TRUE(c["passed"].get<bool>());
  ASSERT_EQ(c["tasks"].size(), 1u);
  EXPECT_EQ(c["tasks"][0]["name"], "written_rmsnorm");

  const fs::path dir = temp_path("skeleton");
  nlohmann::json n =
      json_of({"new", dir.string(), "--signature",
               "void row_sum(const float* x, float* y, int64_t rows, int64_t cols)", "--json"},
              "schemas/new.schema.json");
  EXPECT_EQ(n["schema"], "kforge-new/1");
  EXPECT_EQ(n["function"], "row_sum");
  EXPECT_EQ(n["inputs"], nlohmann::json({"x"}));
  EXPECT_EQ(n["outputs"], nlohmann::json({"y"}));
  EXPECT_EQ(n["dims"], nlohmann::json({"rows", "cols"}));
  EXPECT_FALSE(n["missing"].empty());
  for (const auto& f : n["files"]) EXPECT_TRUE(fs::exists(dir / f.get<std::string>())) << f;

  // The skeleton, checked: incomplete, and the document says what is missing.
  nlohmann::json todo = json_of({"check", dir.string(), "--json"}, "schemas/check.schema.json", 1);
  EXPECT_FALSE(todo["passed"].get<bool>());
  EXPECT_EQ(todo["tasks"][0]["checks"][0]["scope"], "todo");
}

TEST(JsonCli, BenchPrintsTheDocumentInsteadOfTheTableAndWritesItToAFile) {
  const fs::path file = temp_path("bench.json"), html_file = temp_path("bench.html");
  ProcessResult r;
  nlohmann::json j = json_of({"bench", (kSource / "tests/integration/written_source").string(),
                              "--tasks", "task", "--solutions", "reference", "--min-time", "0.05",
                              "--json", "--json-file", file.string(), "--html", html_file.string()},
                             "schemas/bench.schema.json", 0, &r);
  EXPECT_EQ(j["schema"], "kforge-bench/1");
  ASSERT_EQ(j["rows"].size(), 1u);
  EXPECT_EQ(j["rows"][0]["task"], "task");
  EXPECT_EQ(j["rows"][0]["status"], "ok");
  EXPECT_EQ(j["rows"][0]["result"]["task"], "written_rmsnorm");
  ASSERT_EQ(j["summary"].size(), 1u);
  EXPECT_EQ(j["summary"][0]["correct"], 1);
  EXPECT_NE(r.err.find("reference: 1/1 correct"), std::string::npos) << r.err;
  EXPECT_EQ(read_json(file), j);
  // --html: the same rows as a page, with the task's category chart.
  auto html = read_file(html_file);
  ASSERT_TRUE(html.has_value());
  EXPECT_NE(html->find("<svg class=\"bars\""), std::string::npos);
  EXPECT_NE(html->find("<tr><td>task</td>"), std::string::npos) << *html;
}

TEST(JsonCli, ChatAnswersEachCommandWithOneDocumentPerLine) {
  const std::string db = temp_path("chat.db").string();
  auto r = testing::run_kforge_with_input(
      {"chat", kTask.string(), "--store", db, "--min-time", "0.02", "--json"},
      "history\nbogus\n\nquit\n");
  ASSERT_TRUE(r.ok()) << describe(r);
  std::vector<nlohmann::json> docs;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const fs::path f = temp_path("chat_line.json");
    ASSERT_TRUE(write_file_atomic(f, line).ok());
    EXPECT_EQ(schema_errors("schemas/chat.schema.json", f), "") << line;
    docs.push_back(nlohmann::json::parse(line));
  }
  ASSERT_EQ(docs.size(), 4u) << "the status, then one per command (the empty line is none)\n"
                             << r.out;
  EXPECT_EQ(docs[0]["command"], "status");
  EXPECT_EQ(docs[1]["command"], "history");
  EXPECT_TRUE(docs[1]["ok"].get<bool>());
  EXPECT_NE(docs[1]["answer"].get<std::string>().find("#1 "), std::string::npos);
  EXPECT_FALSE(docs[2]["ok"].get<bool>());
  EXPECT_NE(docs[2]["error"].get<std::string>().find("unknown command"), std::string::npos);
  EXPECT_EQ(docs[3]["command"], "quit");
  for (const auto& d : docs) EXPECT_EQ(d["run"], docs[0]["run"]);
}

TEST(JsonCli, StrategiesListsTheWholeCatalog) {
  nlohmann::json j = json_of({"strategies", "--json"}, "schemas/strategies.schema.json");
  EXPECT_EQ(j["schema"], "kforge-strategies/1");
  ProcessResult text = run_kforge({"strategies"});
  ASSERT_TRUE(text.ok()) << describe(text);
  EXPECT_NE(text.out.find("\n" + std::to_string(j["strategies"].size()) + " strategies;"),
            std::string::npos)
      << text.out;
  std::set<std::string> ids;
  for (const auto& s : j["strategies"]) {
    EXPECT_TRUE(ids.insert(s["id"].get<std::string>()).second) << s["id"];
    EXPECT_NE(text.out.find(s["id"].get<std::string>()), std::string::npos) << s["id"];
  }
  EXPECT_TRUE(ids.count("rfactor_reduction"));
}

// A small optimize run, then show, runs and export of it.
TEST(JsonCli, OptimizeGivesTheSummaryAndShowRunsExportDescribeTheRun) {
  const std::string db = temp_path("runs.db").string(), out = temp_path("run").string();
  ProcessResult r;
  nlohmann::json j = json_of({"optimize", kTask.string(), "--budget-evals", "2", "--min-time",
                              "0.02", "--no-final", "--store", db, "--out", out, "--json"},
                             "schemas/optimize.schema.json", 0, &r);
  EXPECT_EQ(j["schema"], "kforge-optimize/1");
  EXPECT_EQ(j["out_dir"], out);
  EXPECT_EQ(j["summary"], read_json(fs::path(out) / "summary.json"));
  EXPECT_EQ(j["summary"]["run"], j["run"]);
  EXPECT_EQ(j["summary"]["evaluations"], 2);
  EXPECT_FALSE(j["summary"].contains("final"));
  EXPECT_NE(r.err.find("[  2/2]"), std::string::npos) << r.err;  // progress lines on stderr
  const std::string run = j["run"];

  nlohmann::json shown = json_of({"show", run.substr(0, run.size() - 2), "--store", db, "--json"},
                                 "schemas/show.schema.json");
  EXPECT_EQ(shown["schema"], "kforge-show/1");
  EXPECT_EQ(shown["id"], run);
  EXPECT_EQ(shown["state"], "finished");
  EXPECT_EQ(shown["attempts"].size(), j["summary"]["attempts"].get<size_t>());
  EXPECT_EQ(shown["summary"], j["summary"]);

  nlohmann::json runs = json_of({"runs", "--store", db, "--json"}, "runs.schema.json");
  ASSERT_EQ(runs["runs"].size(), 1u);
  EXPECT_EQ(runs["runs"][0]["id"], run);

  const fs::path dir = temp_path("export");
  nlohmann::json e = json_of({"export", run, "--store", db, "-o", dir.string(), "--json"},
                             "schemas/export.schema.json");
  EXPECT_EQ(e["schema"], "kforge-export/1");
  EXPECT_EQ(e["run"], run);
  EXPECT_EQ(e["function"], "rmsnorm");
  EXPECT_EQ(e["call"], "kforge_written_rmsnorm::rmsnorm");
  EXPECT_EQ(e["candidate"], j["summary"]["best"]["key"]);
  EXPECT_EQ(e["linkage"], "c++");
  for (const auto& f : e["files"]) EXPECT_TRUE(fs::exists(dir / f.get<std::string>())) << f;

  const fs::path page = temp_path("report.html");
  nlohmann::json rep = json_of({"report", run, "--store", db, "-o", page.string(), "--json"},
                               "schemas/report.schema.json");
  EXPECT_EQ(rep["schema"], "kforge-report/1");
  EXPECT_EQ(rep["file"], page.string());
  EXPECT_TRUE(fs::exists(page));
}

TEST(JsonCli, SearchGivesTheSummaryWithItsSearchFields) {
  const std::string db = temp_path("runs.db").string(), out = temp_path("run").string();
  nlohmann::json j = json_of({"search", kTask.string(), "--budget-evals", "2", "--min-time", "0.02",
                              "--no-final", "--store", db, "--out", out, "--json"},
                             "schemas/search.schema.json");
  EXPECT_EQ(j["schema"], "kforge-search/1");
  EXPECT_EQ(j["summary"], read_json(fs::path(out) / "summary.json"));
  EXPECT_EQ(j["summary"]["mode"], "search");
  EXPECT_EQ(j["summary"]["evaluations"], 2);
  EXPECT_GE(j["summary"]["search"]["nodes"].get<int>(), 1);
}

// An LLM run (the scripted story, answered by a replay server) replayed without a model.
TEST(JsonCli, ReplaySaysTheReplayReachedTheSameAttempts) {
  auto t = llm::read_transcript(kSource / "tests/integration/llm/story.json");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  auto server = llm::ReplayServer::start(*t);
  ASSERT_TRUE(server.has_value()) << server.error().message();
  const fs::path cfg = temp_path("llm.toml");
  std::ofstream(cfg) << "[llm]\nbase_url = \"" << (*server)->base_url()
                     << "\"\nmodel = \"coder\"\ntimeout_s = 30\n";
  const std::string db = temp_path("runs.db").string();
  nlohmann::json run =
      json_of({"optimize", kTask.string(), "--brain", "llm", "--llm-config", cfg.string(),
               "--budget-evals", "2", "--min-time", "0.02", "--no-final", "--no-profile", "--store",
               db, "--out", temp_path("recorded").string(), "--json"},
              "schemas/optimize.schema.json");
  (*server)->stop();
  ASSERT_TRUE(run.is_object());
  const std::string id = run["run"];
  const std::string out = temp_path("replayed").string();
  nlohmann::json j =
      json_of({"replay", id, "--store", db, "--out", out, "--json"}, "schemas/replay.schema.json");
  EXPECT_EQ(j["schema"], "kforge-replay/1");
  EXPECT_EQ(j["run"], id);
  EXPECT_NE(j["replay_run"], id);
  EXPECT_EQ(j["out_dir"], out);
  EXPECT_TRUE(j["same"].get<bool>());
  EXPECT_EQ(j["difference"], nullptr);
  EXPECT_EQ(j["recorded_attempts"], run["summary"]["attempts"]);
  EXPECT_EQ(j["replayed_attempts"], j["recorded_attempts"]);
  EXPECT_GE(j["exchanges"].get<int>(), 1);
}

}  // namespace
}  // namespace kf
