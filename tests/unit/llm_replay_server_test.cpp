// The replay server (llm/replay_server.h) and its transcripts (llm/transcript.h): exchanges
// answered in order or by role and message, what it records, a clean stop while an answer is
// delayed, hostile transcripts, and `kforge llm-serve` as a real process.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "llm/client.h"
#include "llm/http.h"
#include "llm/replay_server.h"
#include "support/fs.h"
#include "support/kforge_process.h"

namespace kf::llm {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<ReplayServer> serve(const std::string& json) {
  auto t = parse_transcript(json, "t.json");
  KF_CHECK(t.has_value()) << t.error().message();
  auto s = ReplayServer::start(std::move(*t));
  KF_CHECK(s.has_value()) << s.error().message();
  return std::move(*s);
}

ChatClient client_for(const ReplayServer& s, int max_retries = 0) {
  return ChatClient({.base_url = s.base_url(), .model = "m", .max_retries = max_retries},
                    {.sleep = [](double) {}});
}

ChatRequest ask(const std::string& user, const std::string& role = "") {
  return {.messages = {{"system", "sys"}, {"user", user}}, .role_tag = role};
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(ReplayServer, ExchangesAnswerInOrderOrByRoleAndMessage) {
  auto server = serve(R"({"exchanges": [
      {"role": "debugger", "content": "fixed"},
      {"match": "## Plan", "content": "the kernel"},
      {"content": "first plain"},
      {"content": "second plain"}]})");
  auto client = client_for(*server);
  // Scripted out of file order: each request takes the first unused exchange it meets.
  auto a = client.complete(ask("please ## Plan this", "implementer"));
  ASSERT_TRUE(a) << a.error().message();
  EXPECT_EQ(a->content, "the kernel");
  auto b = client.complete(ask("anything", "planner"));
  ASSERT_TRUE(b) << b.error().message();
  EXPECT_EQ(b->content, "first plain");
  auto c = client.complete(ask("error: x", "debugger"));
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->content, "fixed");
  auto d = client.complete(ask("more"));
  ASSERT_TRUE(d) << d.error().message();
  EXPECT_EQ(d->content, "second plain");
  EXPECT_EQ(server->exchanges_left(), 0u);
  // The transcript is spent: HTTP 410, which the client does not retry.
  auto e = client_for(*server, 3).complete(ask("one more"));
  ASSERT_FALSE(e);
  EXPECT_THAT(e.error().message(), HasSubstr("HTTP 410"));
  EXPECT_THAT(e.error().message(), HasSubstr("no exchange left"));
  const auto got = server->received();
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].exchange, 1);
  EXPECT_EQ(got[1].exchange, 2);
  EXPECT_EQ(got[2].exchange, 0);
  EXPECT_EQ(got[2].role_tag, "debugger");
  EXPECT_EQ(got[3].exchange, 3);
  EXPECT_EQ(got[4].exchange, -1);
  EXPECT_EQ(got[1].body, b->request_body);
  EXPECT_EQ(got[0].authorization, "") << "no key configured, none sent";
}

TEST(ReplayServer, BuiltRepliesEstimateTokensAndNameTheModel) {
  auto server = serve(R"({"exchanges": [{"content": "12345678"}]})");
  auto r = client_for(*server).complete(ask("0123456789abcdef"));  // 3 + 16 characters
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->prompt_tokens, 5);      // ceil(19 / 4)
  EXPECT_EQ(r->completion_tokens, 2);  // ceil(8 / 4)
  EXPECT_EQ(r->model, "m");
}

TEST(ReplayServer, ServesWithoutTheV1PrefixAndRefusesANonChatBody) {
  auto server = serve(R"({"models": ["m"], "exchanges": [{"content": "hi"}]})");
  const std::string root = "http://127.0.0.1:" + std::to_string(server->port());
  HttpSession http;
  HttpResponse models = http.send({.post = false, .url = root + "/models"});
  ASSERT_EQ(models.failure, TransportFailure::none) << models.detail;
  EXPECT_EQ(models.status, 200);
  EXPECT_THAT(models.body, HasSubstr("\"id\":\"m\""));
  HttpResponse bad = http.send({.url = root + "/chat/completions", .body = "[1, 2"});
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("not a JSON object with a \\\"messages\\\" array"));
  HttpResponse ok =
      http.send({.url = root + "/chat/completions", .body = R"({"model": "m", "messages": []})"});
  EXPECT_EQ(ok.status, 200);
  EXPECT_THAT(ok.body, HasSubstr("\"content\":\"hi\""));
  EXPECT_EQ(server->received().size(), 3u);
}

TEST(ReplayServer, StopDoesNotWaitForADelayedAnswer) {
  auto server = serve(R"({"exchanges": [{"delay_s": 600, "content": "late"}]})");
  LlmSettings s{.base_url = server->base_url(), .model = "m", .timeout_s = 60, .max_retries = 0};
  auto pending = std::async(std::launch::async, [s] { return ChatClient(s).complete(ask("x")); });
  while (server->received().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  server->stop();
  EXPECT_LT(seconds_since(start), 5);
  auto r = pending.get();
  EXPECT_FALSE(r) << "the stopped server answers 503, or the connection closes";
  server->stop();  // idempotent
}

TEST(ReplayServer, ABusyPortIsAClearError) {
  auto first = serve(R"({"exchanges": []})");
  auto t = parse_transcript(R"({"exchanges": []})", "t.json");
  ASSERT_TRUE(t);
  auto second = ReplayServer::start(std::move(*t), {.port = first->port()});
  ASSERT_FALSE(second);
  EXPECT_THAT(second.error().message(), HasSubstr("could not listen on 127.0.0.1:"));
}

TEST(ReplayServer, HostileTranscriptsAreClearErrors) {
  auto error = [](const std::string& text) {
    auto t = parse_transcript(text, "t.json");
    EXPECT_FALSE(t) << text;
    return t ? std::string() : t.error().message();
  };
  EXPECT_THAT(error("{\"exchanges\": [}"), HasSubstr("t.json: not JSON"));
  EXPECT_THAT(error(std::string(100000, '[')), HasSubstr("nested over 128 deep"));
  EXPECT_THAT(error("[]"), HasSubstr("a transcript is a JSON object"));
  EXPECT_THAT(error("{}"), HasSubstr("no \"exchanges\" array"));
  EXPECT_THAT(error(R"({"exchanges": {}})"), HasSubstr("exchanges must be an array"));
  EXPECT_THAT(error(R"({"exchanges": [], "extra": 1})"), HasSubstr("unknown key 'extra'"));
  EXPECT_THAT(error(R"({"exchanges": [3]})"), HasSubstr("exchanges[0] must be an object"));
  EXPECT_THAT(error(R"({"exchanges": [{}, {"content": 5}]})"),
              HasSubstr("t.json: exchanges[1].content must be a string"));
  EXPECT_THAT(error(R"({"exchanges": [{"status": 99}]})"), HasSubstr("HTTP status"));
  EXPECT_THAT(error(R"({"exchanges": [{"status": 1e9}]})"), HasSubstr("exchanges[0].status"));
  EXPECT_THAT(error(R"({"exchanges": [{"delay_s": -1}]})"), HasSubstr("from 0 to 600"));
  EXPECT_THAT(error(R"({"exchanges": [{"drop": "yes"}]})"), HasSubstr("true or false"));
  EXPECT_THAT(error(R"({"exchanges": [{"retry_after": "1\r\nX: y"}]})"),
              HasSubstr("short printable string"));
  EXPECT_THAT(error(R"({"exchanges": [{"prompt_tokens": -3}]})"), HasSubstr("prompt_tokens"));
  EXPECT_THAT(error(R"({"exchanges": [{"colour": 1}]})"), HasSubstr("exchanges[0].colour"));
  EXPECT_THAT(error(R"({"models": [1], "exchanges": []})"), HasSubstr("models[] must be"));
  EXPECT_THAT(error(std::string(kMaxTranscriptBytes + 1, ' ')), HasSubstr("over 67108864 bytes"));
  auto missing = read_transcript("/nonexistent/t.json");
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().message(), HasSubstr("/nonexistent/t.json"));
}

// `kforge llm-serve` in its own process: its first line is the URL, one completion goes through
// it, and SIGTERM stops it cleanly.
TEST(ReplayServer, TheLlmServeCommandServesUntilSigterm) {
  TempDir dir("kf_llm_serve");
  const auto transcript = dir.path() / "t.json";
  ASSERT_TRUE(write_file_atomic(
      transcript, R"({"exchanges": [{"content": "from the command", "completion_tokens": 3}]})"));
  const std::string out = (dir.path() / "out").string(), err = (dir.path() / "err").string();
  const std::string bin = testing::kforge_bin(), path = transcript.string();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execl(bin.c_str(), bin.c_str(), "llm-serve", "--transcript", path.c_str(), nullptr);
    ::_exit(127);
  }
  std::string url;
  const auto start = std::chrono::steady_clock::now();
  while (url.empty() && seconds_since(start) < 20) {
    auto text = read_file(out);
    if (text && text->find('\n') != std::string::npos) url = text->substr(0, text->find('\n'));
    if (url.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_THAT(url, ::testing::StartsWith("http://127.0.0.1:")) << testing::log_text(err);
  EXPECT_THAT(url, ::testing::EndsWith("/v1"));
  auto r = ChatClient({.base_url = url, .model = "m", .max_retries = 0}).complete(ask("hello"));
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->content, "from the command");
  EXPECT_EQ(r->completion_tokens, 3);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  pid_t done = 0;
  while ((done = ::waitpid(pid, &status, WNOHANG)) == 0 && seconds_since(start) < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "llm-serve did not stop on SIGTERM";
  }
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  const std::string log = testing::log_text(err);
  EXPECT_THAT(log, HasSubstr("POST /v1/chat/completions -> exchange 0: HTTP 200"));
  EXPECT_THAT(log, HasSubstr("1 requests received, 0 exchanges left"));
}

TEST(ReplayServer, TheLlmServeCommandRefusesABadTranscript) {
  TempDir dir("kf_llm_serve_bad");
  const auto transcript = dir.path() / "t.json";
  ASSERT_TRUE(write_file_atomic(transcript, R"({"exchanges": [{"status": "x"}]})"));
  const auto r = testing::run_kforge({"llm-serve", "--transcript", transcript.string()}, 30);
  EXPECT_EQ(r.exit_code, 1) << testing::describe(r);
  EXPECT_THAT(r.err, HasSubstr("exchanges[0].status must be an integer"));
  EXPECT_TRUE(r.out.empty());
}

}  // namespace
}  // namespace kf::llm
