// The LLM brain's roles against the replay server on loopback (agents/llm/brain.h, session.h):
// the faults of a real endpoint (429 with Retry-After, 500, malformed JSON, no code block, a
// reply cut short, a hung connection, 401, a cost budget spent mid-run), the corrective re-ask,
// screening, dedup, the debugger's prompt, and a resumed run answered from its record.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "agents/llm/brain.h"
#include "llm/replay_server.h"
#include "schedule/compiled_task.h"
#include "support/fs.h"
#include "support/test_env.h"

namespace kf::agents::llm_brain {
namespace {

using nlohmann::json;

const std::filesystem::path kFixture =
    kf::testing::source_dir() / "tests/integration/written_source";

std::string good_kernel() {
  return read_file(kFixture / "sources/a_unrolled.cpp").value();
}
std::string fenced(const std::string& code) {
  return "Here it is.\n```cpp\n" + code + "```\n";
}
const std::string kPlanReply =
    "## Analysis\nscalar\n## Bottleneck\nadds\n## Strategy\nUnroll the sum.\n## Expected "
    "effect\n2x\n";

struct Rig {
  std::unique_ptr<llm::ReplayServer> server;
  std::shared_ptr<Session> session;
  std::vector<double> sleeps;
  CompiledTask task;

  explicit Rig(json transcript, SessionOptions o = {}, double timeout_s = 20, int retries = 2) {
    transcript["models"] = {"coder"};
    auto t = llm::parse_transcript(transcript.dump(), "test");
    KF_CHECK(t.has_value()) << t.error().message();
    auto s = llm::ReplayServer::start(*t);
    KF_CHECK(s.has_value()) << s.error().message();
    server = std::move(*s);
    o.config.defaults.base_url = server->base_url();
    o.config.defaults.model = "coder";
    o.config.defaults.timeout_s = timeout_s;
    o.config.defaults.max_retries = retries;
    o.make_client = [this](const llm::LlmSettings& st) {
      return std::make_unique<llm::ChatClient>(
          st, llm::ClientOptions{.sleep = [this](double d) { sleeps.push_back(d); }});
    };
    session = std::make_shared<Session>(std::move(o));
    task = compile_task(kFixture / "task").value();
  }
  WorkContext work() const {
    WorkContext w;
    w.task = &task;
    return w;
  }
  Expected<CandidateMsg> implement() {
    Plan p;
    p.text = "unroll";
    return LlmImplementer(session).implement(p, work());
  }
  Plan plan() {
    PlanInput in;
    in.task = &task;
    return LlmPlanner(session).plan(in);
  }
};

json reply(const std::string& role, const std::string& content) {
  return {{"role", role}, {"content", content}};
}

TEST(LlmBrain, A429WithRetryAfterIsWaitedOutAndRecordedOnce) {
  Rig rig(json{
      {"exchanges",
       {{{"status", 429}, {"retry_after", "2"}}, reply("implementer", fenced(good_kernel()))}}});
  auto c = rig.implement();
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->source, good_kernel());
  EXPECT_EQ(c->kind, SourceKind::written);
  EXPECT_EQ(c->origin, "llm:implementer");
  EXPECT_EQ(rig.sleeps, std::vector<double>{2.0});
  ASSERT_EQ(rig.session->exchanges().size(), 1u);
  EXPECT_EQ(rig.session->exchanges()[0].attempts, 2);
  EXPECT_EQ(rig.session->exchanges()[0].role, "implementer");
  EXPECT_NE(rig.session->exchanges()[0].response.find("chat.completion"), std::string::npos);
}

TEST(LlmBrain, A500ThenAnAnswerIsRetried) {
  Rig rig(json{{"exchanges", {{{"status", 500}}, reply("implementer", fenced(good_kernel()))}}});
  auto c = rig.implement();
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(rig.sleeps.size(), 1u);
  EXPECT_EQ(rig.session->exchanges()[0].attempts, 2);
}

// A body that is not JSON came from the model's side: not retried as HTTP, but asked again
// once (the corrective re-ask), kept verbatim, and the session goes on.
TEST(LlmBrain, MalformedJsonIsAskedAgainOnceAndKeptVerbatim) {
  Rig rig(
      json{{"exchanges", {{{"body", "{not json"}}, reply("implementer", fenced(good_kernel()))}}});
  auto c = rig.implement();
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->source, good_kernel());
  ASSERT_EQ(rig.session->exchanges().size(), 2u);
  const ExchangeRecord& bad = rig.session->exchanges()[0];
  EXPECT_NE(bad.error.find("not JSON"), std::string::npos) << bad.error;
  EXPECT_EQ(bad.response, "{not json");
  EXPECT_FALSE(bad.unanswered());
  EXPECT_NE(bad.request.find("\"messages\""), std::string::npos);
  EXPECT_EQ(rig.session->halted(), "");
  const auto got = rig.server->received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[1].body.find("could not be read"), std::string::npos);
  EXPECT_TRUE(rig.sleeps.empty()) << "no HTTP retry";
}

TEST(LlmBrain, MalformedJsonTwiceIsARecordedFailure) {
  Rig rig(json{{"exchanges", {{{"body", "{not json"}}, {{"body", "<html>"}}}}});
  auto c = rig.implement();
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("broke the contract twice"), std::string::npos)
      << c.error().message();
  EXPECT_EQ(rig.session->exchanges().size(), 2u);
  EXPECT_EQ(rig.session->halted(), "") << "a bad reply does not stop the run";
}

TEST(LlmBrain, NoCodeBlockGetsOneCorrectiveReAskThenFails) {
  Rig rig(json{{"exchanges",
                {reply("implementer", "I would unroll the loop."),
                 reply("implementer", "Unrolling by 8 is best.")}}});
  auto c = rig.implement();
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().message().find("broke the contract twice"), std::string::npos);
  EXPECT_NE(c.error().message().find("no ```cpp code block"), std::string::npos);
  const auto got = rig.server->received();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_NE(got[1].body.find("Your reply broke the contract"), std::string::npos);
  EXPECT_NE(got[1].body.find("I would unroll the loop."), std::string::npos) << "shown back";
  EXPECT_EQ(rig.session->history().back().verdict, "no candidate");
}

TEST(LlmBrain, AReplyCutShortOrScreenedOutIsAskedAgain) {
  Rig rig(json{{"exchanges",
                {{{"role", "implementer"},
                  {"content", "```cpp\nvoid rmsnorm(const float* x,"},
                  {"finish_reason", "length"}},
                 reply("implementer", fenced("#include <fstream>\n" + good_kernel())),
                 reply("implementer", fenced(good_kernel()))}}});
  auto first = rig.implement();  // cut short, then screened out: two breaks
  ASSERT_FALSE(first);
  EXPECT_NE(first.error().message().find("screened out, not compiled: it includes fstream"),
            std::string::npos)
      << first.error().message();
  EXPECT_NE(rig.server->received()[1].body.find("closing ``` is missing"), std::string::npos);
  auto second = rig.implement();
  ASSERT_TRUE(second) << second.error().message();
}

TEST(LlmBrain, AHungConnectionFailsAtTheTimeout) {
  Rig rig(json{{"exchanges", {{{"delay_s", 30}, {"content", fenced(good_kernel())}}}}}, {}, 0.5, 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto c = rig.implement();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(c);
  EXPECT_LT(s, 10.0);
  EXPECT_FALSE(rig.session->exchanges().at(0).error.empty());
}

TEST(LlmBrain, A401StopsThePlannerSayingWhyWithoutTheKey) {
  SessionOptions o;
  o.config.defaults.api_key = "sk-very-secret";
  Rig rig(json{{"exchanges", {{{"status", 401}}}}}, o);
  const Plan p = rig.plan();
  EXPECT_EQ(p.strategy, "stop");
  EXPECT_NE(p.why.find("refused the key"), std::string::npos) << p.why;
  EXPECT_EQ(p.why.find("sk-very-secret"), std::string::npos);
  for (const auto& e : rig.session->exchanges())
    EXPECT_EQ(e.request.find("sk-very-secret"), std::string::npos);
  // No answer came: the session halts (the run stops, resumable) and records the call as one
  // a resumed run asks again.
  EXPECT_NE(rig.session->halted().find("HTTP 401"), std::string::npos) << rig.session->halted();
  ASSERT_EQ(rig.session->exchanges().size(), 1u);
  EXPECT_TRUE(rig.session->exchanges()[0].unanswered());
  EXPECT_FALSE(rig.implement()) << "a halted session asks nothing more";
  EXPECT_EQ(rig.server->received().size(), 1u);
}

TEST(LlmBrain, ACostBudgetSpentMidRunStopsTheNextPlan) {
  SessionOptions o;
  o.config.prices["coder"] = {.input_per_mtok = 1.0, .output_per_mtok = 1.0};
  o.budget.max_cost = 0.004;
  Rig rig(json{{"exchanges",
                {{{"role", "planner"},
                  {"content", kPlanReply},
                  {"prompt_tokens", 4000},
                  {"completion_tokens", 1000}},
                 reply("planner", kPlanReply)}}},
          o);
  const Plan first = rig.plan();
  EXPECT_EQ(first.text, "Unroll the sum.");
  EXPECT_DOUBLE_EQ(first.expected_speedup, 2.0);
  EXPECT_NEAR(rig.session->exchanges()[0].cost, 0.005, 1e-12);
  const Plan second = rig.plan();
  EXPECT_EQ(second.strategy, "stop");
  EXPECT_NE(second.why.find("cost budget"), std::string::npos) << second.why;
  EXPECT_EQ(rig.server->received().size(), 1u) << "the spent budget asks nothing";
  EXPECT_NE(rig.session->halted().find("cost budget"), std::string::npos);
}

TEST(LlmBrain, TheSameKernelWrittenAgainIsHandedInAsTheFirst) {
  const std::string again = "// the same, reformatted\n" + good_kernel() + "\n\n";
  Rig rig(
      json{{"exchanges",
            {reply("implementer", fenced(good_kernel())), reply("implementer", fenced(again))}}});
  auto a = rig.implement();
  auto b = rig.implement();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->source, a->source);
  EXPECT_EQ(b->key, a->key) << "the store answers for it";
}

TEST(LlmBrain, TheDebuggerRepairsWrittenCodeFromTheDiagnostics) {
  Rig rig(json{{"exchanges", {reply("debugger", fenced(good_kernel()))}}});
  CandidateMsg broken{
      .key = "k1", .source = "void rmsnorm() { oops }", .origin = "llm:implementer"};
  RunResult r;
  r.verdict = Verdict::compile_error;
  r.message = "the candidate did not compile";
  r.compile.diagnostics.push_back({.line = 1,
                                   .column = 18,
                                   .severity = "error",
                                   .message = "'oops' was not declared in this scope"});
  DebugOutcome d = LlmDebugger(rig.session).debug(broken, r, 1, rig.work());
  ASSERT_TRUE(d.repaired) << (d.diagnostics.details.empty() ? "" : d.diagnostics.details.back());
  EXPECT_EQ(d.repaired->origin, "llm:debugger");
  EXPECT_EQ(d.repaired->parent, "k1");
  EXPECT_EQ(d.diagnostics.phase, "compile");
  const auto got = rig.server->received();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_NE(got[0].body.find("1:18: error: 'oops' was not declared"), std::string::npos);
  EXPECT_NE(got[0].body.find("void rmsnorm() { oops }"), std::string::npos);
  // A generated candidate is not the model's to repair: no call.
  broken.kind = SourceKind::generated;
  EXPECT_FALSE(LlmDebugger(rig.session).debug(broken, r, 1, rig.work()).repaired);
  EXPECT_EQ(rig.server->received().size(), 1u);
}

TEST(LlmBrain, AResumedRunIsAnsweredFromItsRecordUntilItDiverges) {
  Rig first(json{
      {"exchanges", {reply("planner", kPlanReply), reply("implementer", fenced(good_kernel()))}}});
  ASSERT_EQ(first.plan().text, "Unroll the sum.");
  ASSERT_TRUE(first.implement());
  // A second session (the resumed process) with the record; its server has one new answer.
  Rig second(json{{"exchanges",
                   {reply("planner",
                          "## Analysis\n.\n## Bottleneck\n.\n## Strategy\n"
                          "stop\n## Expected effect\n1x\n")}}});
  std::vector<ExchangeRecord> stored;
  second.session->begin_run(first.session->exchanges(), [&](const ExchangeRecord& e) {
    stored.push_back(e);
    return ok_status();
  });
  EXPECT_EQ(second.plan().text, "Unroll the sum.");
  auto c = second.implement();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->source, good_kernel());
  EXPECT_EQ(second.session->replayed(), 2);
  EXPECT_TRUE(second.server->received().empty()) << "nothing asked of the model";
  EXPECT_TRUE(stored.empty()) << "nothing recorded twice";
  EXPECT_EQ(second.plan().strategy, "stop");  // past the record: the model answers
  EXPECT_EQ(second.server->received().size(), 1u);
  EXPECT_EQ(stored.size(), 1u);
  EXPECT_EQ(second.session->meter().total().calls, 3) << "the record's usage counted once";
}

// The record of a run that halted: a reply that did not read is answered again as the same
// failure (the role asks again, as it did); the call that got no answer is asked of the model.
TEST(LlmBrain, AResumedRunAsksAgainWhereNoAnswerCameAndReplaysBadReplies) {
  Rig first(json{{"exchanges",
                  {{{"body", "{not json"}},
                   reply("implementer", fenced(good_kernel())),
                   {{"status", 401}}}}},
            {}, 20, 0);
  ASSERT_TRUE(first.implement());
  EXPECT_EQ(first.plan().strategy, "stop");
  ASSERT_FALSE(first.session->halted().empty());
  ASSERT_EQ(first.session->exchanges().size(), 3u);
  Rig second(json{{"exchanges", {reply("planner", kPlanReply)}}});
  second.session->begin_run(first.session->exchanges(), nullptr);
  auto c = second.implement();
  ASSERT_TRUE(c);
  EXPECT_EQ(c->source, good_kernel());
  EXPECT_EQ(second.session->replayed(), 2) << "the bad reply and the good one";
  EXPECT_EQ(second.plan().text, "Unroll the sum.") << "the 401 is not replayed: asked again";
  EXPECT_EQ(second.server->received().size(), 1u);
  EXPECT_EQ(second.session->halted(), "");
}

}  // namespace
}  // namespace kf::agents::llm_brain
