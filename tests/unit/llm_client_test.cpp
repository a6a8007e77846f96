// The OpenAI-compatible client (llm/client.h) against the real replay server on loopback: replies
// parsed with their tokens, each fault retried or reported as the header says, the wait before a
// retry (injected, so nothing sleeps), and no key in any message.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "llm/client.h"
#include "llm/replay_server.h"

namespace kf::llm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kKey = "sk-test-6f1c0ffee5ecret";

struct Fixture {
  std::unique_ptr<ReplayServer> server;
  std::vector<double> sleeps;
  std::vector<Attempt> attempts;

  explicit Fixture(const std::string& transcript_json) {
    auto t = parse_transcript(transcript_json, "test.json");
    KF_CHECK(t.has_value()) << t.error().message();
    auto s = ReplayServer::start(std::move(*t));
    KF_CHECK(s.has_value()) << s.error().message();
    server = std::move(*s);
  }
  LlmSettings settings(int max_retries = 3) const {
    return {.base_url = server->base_url(),
            .model = "coder",
            .api_key = kKey,
            .api_key_source = "file",
            .timeout_s = 5,
            .connect_timeout_s = 2,
            .max_retries = max_retries};
  }
  ChatClient client(int max_retries = 3, double timeout_s = 5) {
    LlmSettings s = settings(max_retries);
    s.timeout_s = timeout_s;
    return ChatClient(s, {.sleep = [this](double t) { sleeps.push_back(t); },
                          .uniform = [] { return 0.5; },
                          .on_attempt = [this](const Attempt& a) { attempts.push_back(a); }});
  }
};

// A loopback port held by this test: bound only (a connection is refused), or listening but
// never accepting (a connection opens and nothing answers). No other server can take it.
class HeldPort {
 public:
  explicit HeldPort(bool listening) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    KF_CHECK(fd_ >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    KF_CHECK(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    socklen_t n = sizeof(a);
    KF_CHECK(::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &n) == 0);
    port_ = ntohs(a.sin_port);
    if (listening) {
      KF_CHECK(::listen(fd_, 8) == 0);
    }
  }
  ~HeldPort() { ::close(fd_); }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

ChatRequest hello() {
  return {.messages = {{"system", "You write kernels."}, {"user", "secret prompt text"}},
          .temperature = 0.2,
          .max_tokens = 512,
          .role_tag = "implementer"};
}

TEST(LlmClient, AReplyIsParsedWithItsTokensAndTheBodiesVerbatim) {
  Fixture f(R"({"exchanges": [{"content": "int main() {}", "prompt_tokens": 123,
                               "completion_tokens": 45, "model": "coder-v2"}]})");
  auto r = f.client().complete(hello());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->content, "int main() {}");
  EXPECT_EQ(r->finish_reason, "stop");
  EXPECT_FALSE(r->truncated);
  EXPECT_EQ(r->prompt_tokens, 123);
  EXPECT_EQ(r->completion_tokens, 45);
  EXPECT_TRUE(r->usage_reported);
  EXPECT_EQ(r->model, "coder-v2");
  EXPECT_EQ(r->attempts, 1);
  EXPECT_GT(r->latency_s, 0);
  EXPECT_THAT(r->response_body, HasSubstr("\"int main() {}\""));
  // What the server received is the request body recorded, with the key and role headers.
  const auto got = f.server->received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].path, "/v1/chat/completions");
  EXPECT_EQ(got[0].body, r->request_body);
  EXPECT_EQ(got[0].authorization, std::string("Bearer ") + kKey);
  EXPECT_EQ(got[0].role_tag, "implementer");
  const auto sent = nlohmann::json::parse(got[0].body);
  EXPECT_EQ(sent["model"], "coder");
  EXPECT_EQ(sent["max_tokens"], 512);
  EXPECT_DOUBLE_EQ(sent["temperature"].get<double>(), 0.2);
  EXPECT_EQ(sent["messages"][1]["content"], "secret prompt text");
  EXPECT_TRUE(f.sleeps.empty());
}

TEST(LlmClient, A429WithRetryAfterIsWaitedOutThenSucceeds) {
  Fixture f(R"({"exchanges": [{"status": 429, "retry_after": "7"}, {"content": "ok"}]})");
  auto r = f.client().complete(hello());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->content, "ok");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_EQ(f.sleeps, std::vector<double>{7.0});
  ASSERT_EQ(f.attempts.size(), 2u);
  EXPECT_EQ(f.attempts[0].http_status, 429);
  EXPECT_TRUE(f.attempts[0].will_retry);
  EXPECT_EQ(f.server->received().size(), 2u);
}

TEST(LlmClient, RetryAfterIsCappedAndItsDateFormFallsBackToBackoff) {
  Fixture f(R"({"exchanges": [{"status": 503, "retry_after": "86400"},
                              {"status": 503, "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT"},
                              {"content": "ok"}]})");
  auto r = f.client().complete(hello());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->attempts, 3);
  // Capped at max_retry_after_s (60); then full jitter: uniform 0.5 x min(30, 1 x 2^1).
  EXPECT_EQ(f.sleeps, (std::vector<double>{60.0, 1.0}));
}

TEST(LlmClient, A500ThenSuccessBacksOffWithFullJitter) {
  Fixture f(R"({"exchanges": [{"status": 500}, {"status": 502}, {"content": "fine"}]})");
  auto r = f.client().complete(hello());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->content, "fine");
  EXPECT_EQ(r->attempts, 3);
  EXPECT_EQ(f.sleeps, (std::vector<double>{0.5, 1.0}));  // 0.5 x 1, 0.5 x 2
}

TEST(LlmClient, RetriesStopAtMaxRetries) {
  Fixture f(R"({"exchanges": [{"status": 503}, {"status": 503}, {"status": 503},
                              {"content": "never reached"}]})");
  auto r = f.client(/*max_retries=*/2).complete(hello());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("HTTP 503"));
  EXPECT_THAT(r.error().message(), HasSubstr("gave up after 3 attempts"));
  EXPECT_EQ(f.sleeps.size(), 2u);
  EXPECT_EQ(f.server->exchanges_left(), 1u);
}

TEST(LlmClient, A401IsAClearErrorNotRetriedAndTheKeyIsMasked) {
  // The server's message quotes the key, as some do: it must not reach the message.
  Fixture f(std::string(R"({"exchanges": [{"status": 401, "body":
      "{\"error\": {\"message\": \"Incorrect API key provided: )") +
            kKey + R"(\"}}"}, {"content": "never"}]})");
  auto r = f.client().complete(hello());
  ASSERT_FALSE(r);
  const std::string m = r.error().message();
  EXPECT_THAT(m, HasSubstr("refused the key (HTTP 401)"));
  EXPECT_THAT(m, HasSubstr(f.server->base_url()));
  EXPECT_THAT(m, HasSubstr("model coder"));
  EXPECT_THAT(m, Not(HasSubstr(kKey)));
  EXPECT_THAT(m, Not(HasSubstr("secret prompt")));
  EXPECT_EQ(f.server->received().size(), 1u) << "401 is not retried";
  EXPECT_TRUE(f.sleeps.empty());
}

TEST(LlmClient, A404SaysUnknownModelWhenTheBodySaysSoAndWrongUrlOtherwise) {
  Fixture f(R"({"exchanges": [
      {"status": 404, "body": "{\"error\": {\"message\": \"The model `coder` does not exist\", \"code\": \"model_not_found\"}}"},
      {"status": 404, "body": "<html>Not Found</html>"}]})");
  auto client = f.client();
  auto a = client.complete(hello());
  ASSERT_FALSE(a);
  EXPECT_THAT(a.error().message(), HasSubstr("does not serve model coder (HTTP 404)"));
  auto b = client.complete(hello());
  ASSERT_FALSE(b);
  EXPECT_THAT(b.error().message(), HasSubstr("wrong base URL"));
  EXPECT_EQ(f.server->received().size(), 2u) << "404 is not retried";
}

TEST(LlmClient, A400CarriesTheServersMessage) {
  Fixture f(R"({"exchanges": [{"status": 400, "body":
      "{\"error\": {\"message\": \"max_tokens is too large: 99999\"}}"}]})");
  auto r = f.client().complete(hello());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("rejected the request (HTTP 400)"));
  EXPECT_THAT(r.error().message(), HasSubstr("max_tokens is too large: 99999"));
}

TEST(LlmClient, MalformedAndEmptyRepliesAreClearErrors) {
  Fixture f(R"({"exchanges": [{"body": "{\"choices\": [ oops"},
                              {"body": "{\"object\": \"chat.completion\", \"choices\": []}"},
                              {"body": "{\"choices\": [{\"message\": {\"role\": \"assistant\"}}]}"},
                              {"body": "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}]})");
  auto client = f.client();
  auto a = client.complete(hello());
  ASSERT_FALSE(a);
  EXPECT_THAT(a.error().message(), HasSubstr("the endpoint's reply is not JSON"));
  auto b = client.complete(hello());
  ASSERT_FALSE(b);
  EXPECT_THAT(b.error().message(), HasSubstr("has no choices"));
  auto c = client.complete(hello());
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message(), HasSubstr("no message content"));
  auto d = client.complete(hello());
  ASSERT_FALSE(d);
  EXPECT_THAT(d.error().message(), HasSubstr("not JSON")) << "nested past the depth bound";
  EXPECT_EQ(f.server->received().size(), 4u) << "none is retried";
}

TEST(LlmClient, FinishReasonLengthIsAFlagNotAnError) {
  Fixture f(R"({"exchanges": [{"content": "int f(", "finish_reason": "length"}]})");
  auto r = f.client().complete(hello());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->truncated);
  EXPECT_EQ(r->content, "int f(");
}

TEST(LlmClient, AHungReplyTimesOutThenTheRetryIsAnswered) {
  Fixture f(R"({"exchanges": [{"delay_s": 30, "content": "late"}, {"content": "on time"}]})");
  const auto start = std::chrono::steady_clock::now();
  auto r = f.client(/*max_retries=*/1, /*timeout_s=*/1).complete(hello());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->content, "on time");
  EXPECT_EQ(r->attempts, 2);
  ASSERT_EQ(f.attempts.size(), 2u);
  EXPECT_EQ(f.attempts[0].http_status, 0);
  EXPECT_THAT(f.attempts[0].error, HasSubstr("no answer within 1 s"));
  f.server->stop();  // does not wait for the 30 s delay
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10);
}

TEST(LlmClient, AHungReplyWithoutRetriesIsATimeoutError) {
  Fixture f(R"({"exchanges": [{"delay_s": 30, "content": "late"}]})");
  auto r = f.client(/*max_retries=*/0, /*timeout_s=*/1).complete(hello());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("no answer within 1 s"));
  EXPECT_THAT(r.error().message(), HasSubstr("model coder"));
}

TEST(LlmClient, ADroppedConnectionIsRetried) {
  Fixture f(R"({"exchanges": [{"drop": true, "content": "lost"}, {"content": "again"}]})");
  auto r = f.client().complete(hello());
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(r->content, "again");
  EXPECT_EQ(r->attempts, 2);
  EXPECT_THAT(f.attempts[0].error, HasSubstr("closed before a whole answer"));
}

TEST(LlmClient, ARefusedConnectionIsRetriedThenReported) {
  Fixture f(R"({"exchanges": []})");
  const HeldPort refused(/*listening=*/false);
  LlmSettings s = f.settings(/*max_retries=*/2);
  s.base_url = refused.base_url();
  std::vector<double> sleeps;
  ChatClient client(s, {.sleep = [&](double t) { sleeps.push_back(t); }});
  auto r = client.complete(hello());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("could not connect"));
  EXPECT_THAT(r.error().message(), HasSubstr("gave up after 3 attempts"));
  EXPECT_EQ(sleeps.size(), 2u);
}

TEST(LlmClient, AReplyOverTheSizeCapIsStopped) {
  Fixture f(R"({"exchanges": [{"content": ")" + std::string(4096, 'x') + R"("}]})");
  ChatClient client(f.settings(), {.max_response_bytes = 1024});
  auto r = client.complete(hello());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("over 1024 bytes"));
}

TEST(LlmClient, SettingsWithoutAnEndpointFailBeforeAnyRequest) {
  ChatClient client(LlmSettings{.model = "m"});
  auto r = client.complete(hello());
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message(), HasSubstr("OPENAI_BASE_URL"));
}

TEST(LlmClient, TheProbeListsModelsAndTheirContext) {
  Fixture f(R"({"models": ["coder", "other"], "context_length": 32768, "exchanges": []})");
  auto p = f.client().probe();
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_EQ(p->models, (std::vector<std::string>{"coder", "other"}));
  EXPECT_TRUE(p->model_listed);
  EXPECT_EQ(p->context_tokens, 32768);
  EXPECT_TRUE(check_context(*p, f.settings(), 30000));
  const Status too_long = check_context(*p, f.settings(), 40000);
  EXPECT_FALSE(too_long);
  EXPECT_THAT(too_long.message(), HasSubstr("context of 32768 tokens"));
  EXPECT_EQ(f.server->received().at(0).path, "/v1/models");
}

TEST(LlmClient, TheProbeRejectsAModelTheEndpointDoesNotList) {
  Fixture f(R"({"models": ["llama-3-8b", "qwen-7b"], "exchanges": []})");
  auto p = f.client().probe();
  ASSERT_FALSE(p);
  EXPECT_THAT(p.error().message(), HasSubstr("model coder is not among the models"));
  EXPECT_THAT(p.error().message(), HasSubstr("llama-3-8b, qwen-7b"));
}

TEST(LlmClient, TheProbeAcceptsAnEndpointThatListsNoModels) {
  Fixture f(R"({"exchanges": []})");
  auto p = f.client().probe();
  ASSERT_TRUE(p) << p.error().message();
  EXPECT_FALSE(p->model_listed);
  EXPECT_FALSE(p->context_tokens);
  EXPECT_TRUE(check_context(*p, f.settings(), 1'000'000)) << "unknown context: not refused";
}

TEST(LlmClient, TheProbeFailsFastWhenNothingAnswers) {
  Fixture f(R"({"exchanges": []})");
  for (const bool listening : {false, true}) {
    const HeldPort port(listening);
    LlmSettings s = f.settings();
    s.base_url = port.base_url();
    const auto start = std::chrono::steady_clock::now();
    auto p = ChatClient(s, {.probe_timeout_s = 1}).probe();
    ASSERT_FALSE(p);
    EXPECT_THAT(p.error().message(), HasSubstr("the endpoint does not answer"));
    EXPECT_THAT(p.error().message(),
                HasSubstr(listening ? "no answer within 1 s" : "could not connect"));
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
  }
}

TEST(LlmClient, NoMessageHoldsTheKeyEvenWhenTheServerEchoesIt) {
  // Every fault the server can script, one after another, each reply echoing the key.
  const std::string echo = std::string("key ") + kKey + " prompt secret prompt text";
  Fixture f(R"({"exchanges": [{"status": 401, "body": ")" + echo + R"("},
      {"status": 400, "body": ")" +
            echo + R"("}, {"status": 404, "body": ")" + echo + R"("},
      {"status": 418, "body": ")" +
            echo + R"("}, {"body": ")" + echo + R"("}]})");
  auto client = f.client(/*max_retries=*/0);
  for (int i = 0; i < 5; ++i) {
    auto r = client.complete(hello());
    ASSERT_FALSE(r);
    EXPECT_THAT(r.error().message(), Not(HasSubstr(kKey))) << i;
  }
  EXPECT_THAT(f.settings().redacted(), Not(HasSubstr(kKey)));
  EXPECT_THAT(f.settings().redacted(), HasSubstr("<set from file>"));
}

}  // namespace
}  // namespace kf::llm
