// A small OpenAI-compatible HTTP server (cpp-httplib) that answers from a transcript
// (transcript.h): the tests' model, and `kforge llm-serve` for demos and reproducing sessions.
//
//   auto server = ReplayServer::start(*read_transcript("t.json"));   // 127.0.0.1, a free port
//   LlmSettings s{.base_url = (*server)->base_url(), .model = "coder"};
//   ChatClient(s).complete(...);
//   (*server)->received();   // what it was sent, in order
//   (*server)->stop();       // joins; also on destruction
//
// Routes: POST /v1/chat/completions and GET /v1/models, and the same without /v1. A chat request
// whose body is not a JSON object with a "messages" array gets HTTP 400; one that no exchange
// left matches gets HTTP 410 with a message saying so (not a status the client retries).
// Delays wait on a condition that stop() signals, so stop() never waits for a scripted delay;
// requests run on the server's thread pool, so a client that timed out can retry meanwhile.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "llm/transcript.h"
#include "support/status.h"

namespace kf::llm {

struct ReceivedRequest {
  std::string method, path;
  std::string body;           // verbatim
  std::string authorization;  // the header's value, "" when absent (kept in memory only)
  std::string role_tag;       // X-Kforge-Role
  int exchange = -1;          // the exchange that answered it; -1: none
};

struct ReplayServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  // One line per request ("POST /v1/chat/completions -> exchange 2: HTTP 429"); never a key.
  std::function<void(const std::string&)> log;
};

class ReplayServer {
 public:
  // Binds and starts serving on a thread of its own. Fails when the address cannot be bound.
  static Expected<std::unique_ptr<ReplayServer>> start(Transcript transcript,
                                                       ReplayServerOptions options = {});
  ~ReplayServer();
  ReplayServer(const ReplayServer&) = delete;
  ReplayServer& operator=(const ReplayServer&) = delete;

  int port() const;
  // "http://HOST:PORT/v1": the base_url a client is given.
  std::string base_url() const;
  // Stops accepting, wakes delayed answers and joins the threads. Idempotent.
  void stop();

  std::vector<ReceivedRequest> received() const;
  size_t exchanges_left() const;

 private:
  struct State;
  explicit ReplayServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace kf::llm
