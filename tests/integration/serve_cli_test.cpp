// `kforge serve`, started for real: a session started in the terminal continues in the browser
// (Playwright driving Debian's chromium through tests/web/serve_ui.mjs: plan, apply, an edit in
// the page) and back in the terminal, every step a node with proposer "human"; and the server
// refuses what it must (no token, another Host or Origin, forms, commands that name files,
// oversized bodies, a public address without a token).
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>

#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::KforgeChild;

const fs::path kTask = testing::source_dir() / "tests/golden/tasks/f64_layernorm";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_serve_cli");
}

// A chat run made in the terminal: the first candidate and one applied plan.
std::string terminal_chat(const fs::path& dir, const fs::path& db, const std::string& script) {
  const fs::path in = dir / "script.txt";
  KF_CHECK(write_file_atomic(in, script).ok());
  auto r = run_process(
      {.argv = {"sh", "-c", "exec \"$0\" chat \"$1\" --store \"$2\" --min-time 0.05 < \"$3\"",
                testing::kforge_bin(), kTask.string(), db.string(), in.string()},
       .timeout_s = 300});
  KF_CHECK(r && r->ok()) << (r ? describe(*r) : r.error().message());
  return r->out;
}

// `kforge serve` in the background; its address once it prints it.
struct Served {
  std::unique_ptr<KforgeChild> child;
  std::string url, token;
  int port = 0;
};

Served serve(const fs::path& dir, const fs::path& db) {
  Served s;
  const fs::path log = dir / "serve.log";
  s.child = std::make_unique<KforgeChild>(
      std::vector<std::string>{"serve", "--port", "0", "--store", db.string()}, log);
  const std::regex address(R"(http://127\.0\.0\.1:([0-9]+)/#token=([0-9a-f]+))");
  for (int i = 0; i < 300 && s.url.empty(); ++i) {
    std::smatch m;
    const std::string text = testing::log_text(log);
    if (std::regex_search(text, m, address)) {
      s.url = m[0];
      s.port = std::stoi(m[1]);
      s.token = m[2];
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  KF_CHECK(!s.url.empty()) << "kforge serve printed no address:\n" << testing::log_text(log);
  return s;
}

TEST(ServeCli, ATerminalSessionContinuesInTheBrowserAndBackEveryStepANode) {
  const fs::path dir = temp_root() / "continue", db = dir / "runs.db";
  fs::create_directories(dir);
  terminal_chat(dir, db, "plan 2\napply 1\nquit\n");
  auto store = testing::open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  const size_t before = store->attempts(run)->size();

  Served s = serve(dir, db);
  const fs::path shot = fs::path(KFORGE_TEST_BINARY_DIR) / "test-artifacts" / "serve.png";
  fs::create_directories(shot.parent_path());
  const fs::path script = testing::source_dir() / "tests/web/serve_ui.mjs";
  ASSERT_TRUE(fs::exists(testing::source_dir() / "tests/web/node_modules/playwright-core"))
      << "Playwright is missing: scripts/install-deps.sh runs npm ci in tests/web";
  auto ui = run_process(
      {.argv = {"node", script.string(), s.url + "&run=" + run, shot.string()}, .timeout_s = 600});
  ASSERT_TRUE(ui.has_value()) << ui.error().message();
  ASSERT_TRUE(ui->ok()) << describe(*ui);
  const auto seen = nlohmann::json::parse(ui->out);
  EXPECT_EQ(seen["graph_svg"], 1) << ui->out;
  EXPECT_EQ(seen["curve_svg"], 1) << ui->out;
  EXPECT_EQ(seen["rows_at_start"], 2) << "the terminal's two nodes\n" << ui->out;
  EXPECT_GE(seen["human_rows"].get<int>(), 1) << ui->out;
  EXPECT_GT(seen["code_shown"].get<int>(), 100) << ui->out;
  EXPECT_NE(seen["plan"].get<std::string>().find("proposals for #"), std::string::npos);
  EXPECT_NE(seen["apply"].get<std::string>().find("[human]"), std::string::npos) << ui->out;
  EXPECT_NE(seen["edit"].get<std::string>().find("edit of #"), std::string::npos) << ui->out;
  EXPECT_GE(seen["rows_at_end"].get<int>(), 3) << ui->out;
  EXPECT_TRUE(seen["errors"].empty()) << "no script error under the page's CSP\n" << ui->out;
  s.child->signal(SIGINT);  // a clean stop: the browser's session is closed as `quit` would
  for (int i = 0; i < 600 && !s.child->ended(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(s.child->ended());
  EXPECT_TRUE(WIFEXITED(s.child->status()) && WEXITSTATUS(s.child->status()) == 0);

  // The browser's steps are in the store as the person's nodes, after the terminal's.
  auto attempts = store->attempts(run);
  ASSERT_TRUE(attempts.has_value());
  ASSERT_GT(attempts->size(), before);
  const AttemptRecord& edit = attempts->back();
  EXPECT_EQ(edit.detail["move"]["proposer"], "human");
  EXPECT_EQ(edit.detail["move"]["kind"], "human");
  auto c = store->get_candidate(edit.candidate_key);
  ASSERT_TRUE(c && c->has_value());
  EXPECT_EQ((*c)->source.rfind("// edited in the browser\n", 0), 0u);
  EXPECT_EQ((*c)->provenance["kind"], "edited");
  for (size_t i = before; i < attempts->size(); ++i) {
    if ((*attempts)[i].kind != "chat") continue;
    EXPECT_EQ((*attempts)[i].detail["move"]["proposer"], "human") << (*attempts)[i].strategy;
  }

  // And back in the terminal: the browser's nodes are there.
  auto again = run_process(
      {.argv = {"sh", "-c",
                "printf 'history\\nquit\\n' | exec \"$0\" chat --run \"$1\" --store \"$2\"",
                testing::kforge_bin(), run, db.string()},
       .timeout_s = 300});
  ASSERT_TRUE(again && again->ok()) << (again ? describe(*again) : again.error().message());
  EXPECT_NE(again->out.find("browser-edit-"), std::string::npos) << again->out;
}

TEST(ServeCli, TheServerRefusesWhatItMust) {
  const fs::path dir = temp_root() / "refuse", db = dir / "runs.db";
  fs::create_directories(dir);
  terminal_chat(dir, db, "quit\n");
  auto store = testing::open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  Served s = serve(dir, db);
  httplib::Client http("127.0.0.1", s.port);
  const httplib::Headers token = {{"X-Kforge-Token", s.token}};
  auto status = [](const httplib::Result& r) { return r ? r->status : -1; };

  EXPECT_EQ(status(http.Get("/api/runs")), 401) << "no token";
  EXPECT_EQ(status(http.Get("/api/runs", {{"X-Kforge-Token", "0" + s.token.substr(1)}})), 401);
  auto ok = http.Get("/api/runs", token);
  ASSERT_EQ(status(ok), 200);
  EXPECT_NE(ok->body.find(run), std::string::npos);
  EXPECT_NE(ok->get_header_value("Content-Security-Policy").find("script-src 'self'"),
            std::string::npos);
  EXPECT_EQ(ok->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_EQ(status(http.Get("/", {{"Host", "evil.example:" + std::to_string(s.port)}})), 403)
      << "DNS rebinding: another name for this address";
  httplib::Headers cross = token;
  cross.emplace("Origin", "http://evil.example");
  EXPECT_EQ(status(http.Post("/api/runs/" + run + "/command", cross, R"({"line":"plan"})",
                             "application/json")),
            403);
  EXPECT_EQ(status(http.Post("/api/runs/" + run + "/command", token, "line=plan",
                             "application/x-www-form-urlencoded")),
            415)
      << "a form can be sent cross-site; it is not a command";
  for (const char* line : {"edit", "export /tmp/elsewhere", "quit", "bogus"}) {
    auto r = http.Post("/api/runs/" + run + "/command", token,
                       nlohmann::json{{"line", line}}.dump(), "application/json");
    EXPECT_EQ(status(r), 400) << line;
  }
  EXPECT_EQ(status(http.Post("/api/runs/" + run + "/edit", token,
                             nlohmann::json{{"source", std::string(1 << 21, 'x')}}.dump(),
                             "application/json")),
            413);
  EXPECT_EQ(status(http.Post("/api/runs/" + run + "/edit", token, "{\"source\": \"\\u0000",
                             "application/json")),
            400)
      << "malformed JSON";
  EXPECT_EQ(status(http.Post("/api/runs/nosuch/command", token, R"({"line":"plan"})",
                             "application/json")),
            400);
  EXPECT_EQ(status(http.Get("/api/runs/..%2F..%2Fetc%2Fpasswd", token)), 404);
  EXPECT_EQ(status(http.Get("/api/runs/" + run + "/events?token=wrong")), 401);
  EXPECT_EQ(status(http.Get("/api/runs/" + run + "/nodes/0123abcd", token)), 404);
  // What a command sent from the page did is a node like any other; nothing else was judged.
  auto history = http.Post("/api/runs/" + run + "/command", token, R"({"line":"history"})",
                           "application/json");
  ASSERT_EQ(status(history), 200);
  EXPECT_NE(history->body.find("#1 "), std::string::npos) << history->body;
  EXPECT_EQ(store->attempts(run)->size(), 1u);

  // A public address needs an explicit token, of some length.
  auto open = testing::run_kforge({"serve", "--host", "0.0.0.0", "--store", db.string()}, 30);
  EXPECT_EQ(open.exit_code, 2) << describe(open);
  EXPECT_NE(open.err.find("needs --token"), std::string::npos) << open.err;
  auto weak = testing::run_kforge({"serve", "--token", "short", "--store", db.string()}, 30);
  EXPECT_EQ(weak.exit_code, 2) << describe(weak);
}

}  // namespace
}  // namespace kf
