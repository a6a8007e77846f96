// `kforge serve`, started for real: a session started in the terminal continues in the browser
// (Playwright driving Debian's chromium through tests/web/serve_ui.mjs: plan, apply, an edit in
// the page) and back in the terminal, every step a node with proposer "human"; and the server
// refuses what it must (no token, another Host or Origin, forms, commands that name files,
// oversized bodies, a public address without a token).
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
void terminal_chat(const fs::path& db, const std::string& script) {
  ProcessResult r = testing::run_kforge_with_input(
      {"chat", kTask.string(), "--store", db.string(), "--min-time", "0.05"}, script);
  KF_CHECK(r.ok()) << describe(r);
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
  terminal_chat(db, "plan 2\napply 1\nquit\n");
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
  EXPECT_GE(seen["graph_canvas"].get<int>(), 1) << "the graph, drawn by cytoscape\n" << ui->out;
  EXPECT_GE(seen["curve_canvas"].get<int>(), 1) << "the curve, drawn by Chart.js\n" << ui->out;
  EXPECT_EQ(seen["rows_at_start"], 2) << "the terminal's two nodes\n" << ui->out;
  EXPECT_GE(seen["human_rows"].get<int>(), 1) << ui->out;
  EXPECT_GT(seen["code_shown"].get<int>(), 100) << ui->out;
  EXPECT_NE(seen["plan"].get<std::string>().find("proposals for #"), std::string::npos);
  EXPECT_NE(seen["apply"].get<std::string>().find("[human]"), std::string::npos) << ui->out;
  EXPECT_NE(seen["opened"].get<std::string>().find("default schedule"), std::string::npos)
      << "the first node, opened from the table\n"
      << ui->out;
  EXPECT_NE(seen["edit"].get<std::string>().find("edit of #1"), std::string::npos) << ui->out;
  EXPECT_EQ(seen["edit_verdict"].get<std::string>().rfind("ok", 0), 0u)
      << "the edit's verdict, on its node's page\n"
      << ui->out;
  EXPECT_EQ(seen["answer_when_a_node_appeared"].get<std::string>().rfind("…", 0), 0u)
      << "a search's node appeared while the search still ran\n"
      << ui->out;
  EXPECT_NE(seen["search"].get<std::string>().find("greedy judged"), std::string::npos) << ui->out;
  EXPECT_GT(seen["rows_after_search"].get<int>(), seen["rows_after_edit"].get<int>()) << ui->out;
  // Stop: the long search hands the wheel back well before its 40 evaluations.
  EXPECT_NE(seen["stopped"].get<std::string>().find("stopped by the person"), std::string::npos)
      << ui->out;
  EXPECT_LT(seen["rows_at_end"].get<int>(), seen["rows_after_search"].get<int>() + 10) << ui->out;
  EXPECT_EQ(seen["roofline_canvas"], 1) << "the node's roofline chart\n" << ui->out;
  EXPECT_NE(seen["findings"].get<std::string>().find("-bound at"), std::string::npos) << ui->out;
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
  const AttemptRecord* found = nullptr;
  for (const AttemptRecord& a : *attempts)
    if (a.strategy.find("browser-edit-") != std::string::npos) found = &a;
  ASSERT_NE(found, nullptr);
  const AttemptRecord& edit = *found;
  EXPECT_EQ(edit.detail["move"]["proposer"], "human");
  EXPECT_EQ(edit.detail["move"]["kind"], "human");
  auto c = store->get_candidate(edit.candidate_key);
  ASSERT_TRUE(c && c->has_value());
  EXPECT_EQ((*c)->source.rfind("// edited in the browser\n", 0), 0u);
  EXPECT_EQ((*c)->provenance["kind"], "edited");
  // The person's steps are "human"; the search's, the team's with the policy named.
  for (size_t i = before; i < attempts->size(); ++i) {
    const AttemptRecord& a = (*attempts)[i];
    if (a.kind != "chat") continue;
    const bool by_search = a.detail.contains("policy");
    EXPECT_EQ(a.detail["move"]["proposer"], by_search ? "builtin" : "human") << a.strategy;
  }

  // And back in the terminal: the browser's nodes are there.
  ProcessResult again = testing::run_kforge_with_input(
      {"chat", "--run", run, "--store", db.string()}, "history\nquit\n");
  ASSERT_TRUE(again.ok()) << describe(again);
  EXPECT_NE(again.out.find("browser-edit-"), std::string::npos) << again.out;
}

TEST(ServeCli, TheServerRefusesWhatItMust) {
  const fs::path dir = temp_root() / "refuse", db = dir / "runs.db";
  fs::create_directories(dir);
  terminal_chat(db, "quit\n");
  auto store = testing::open_store_at(db);
  const std::string run = testing::only_run_in(*store);
  Served s = serve(dir, db);
  httplib::Client http("127.0.0.1", s.port);
  const httplib::Headers token = {{"X-Kforge-Token", s.token}};
  auto status = [](const httplib::Result& r) { return r ? r->status : -1; };

  EXPECT_EQ(status(http.Get("/api/runs")), 401) << "no token";
  // A token one character off (never the token itself: its first character is changed).
  const std::string wrong = (s.token[0] == '0' ? "1" : "0") + s.token.substr(1);
  EXPECT_EQ(status(http.Get("/api/runs", {{"X-Kforge-Token", wrong}})), 401);
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

  // A slow client (a request that never ends) holds one connection until the read timeout, and
  // the server answers others meanwhile.
  const int slow = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(s.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(slow, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  const std::string partial = "GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(s.port);
  ASSERT_EQ(::send(slow, partial.data(), partial.size(), 0), static_cast<ssize_t>(partial.size()));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(status(http.Get("/api/runs", token)), 200) << "answered beside the slow client";
  timeval wait{.tv_sec = 30, .tv_usec = 0};
  setsockopt(slow, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
  char buf[256];
  const ssize_t got = ::recv(slow, buf, sizeof buf, 0);  // the server gives up on it: 0 (closed)
  const double held = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ::close(slow);
  // The server gives up on it: it closes the connection, or answers a 4xx (408), never the data.
  const std::string reply = got > 0 ? std::string(buf, static_cast<size_t>(got)) : "";
  EXPECT_TRUE(got <= 0 || reply.starts_with("HTTP/1.1 4")) << reply;
  EXPECT_LT(held, 20) << "the slow client was dropped at the read timeout";
  EXPECT_EQ(status(http.Get("/api/runs", token)), 200) << "the server stays up";

  // A public address needs an explicit token, of some length.
  auto open = testing::run_kforge({"serve", "--host", "0.0.0.0", "--store", db.string()}, 30);
  EXPECT_EQ(open.exit_code, 2) << describe(open);
  EXPECT_NE(open.err.find("needs --token"), std::string::npos) << open.err;
  auto weak = testing::run_kforge({"serve", "--token", "short", "--store", db.string()}, 30);
  EXPECT_EQ(weak.exit_code, 2) << describe(weak);
}

}  // namespace
}  // namespace kf
