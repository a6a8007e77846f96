#include "llm/replay_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "llm/json_util.h"
#include "support/json_text.h"
#include "support/text_scan.h"

namespace kf::llm {

namespace {

constexpr const char* kJson = "application/json";

std::string error_body(const std::string& message) {
  return dump_json({{"error", {{"message", message}, {"type", "kforge_replay"}}}});
}

}  // namespace

struct ReplayServer::State {
  Transcript transcript;
  ReplayServerOptions options;
  httplib::Server http;
  std::thread thread;
  int port = 0;
  std::atomic<bool> listen_returned = false;

  mutable std::mutex mu;
  std::condition_variable wake;
  bool stopping = false;
  std::vector<bool> used;
  std::vector<ReceivedRequest> received;

  void log(const std::string& line) const {
    if (options.log) options.log(line);
  }

  // Records the request; returns its index in `received`.
  size_t record(const httplib::Request& req) {
    const std::lock_guard lock(mu);
    received.push_back({.method = req.method,
                        .path = req.path,
                        .body = req.body,
                        .authorization = req.get_header_value("Authorization"),
                        .role_tag = req.get_header_value("X-Kforge-Role")});
    return received.size() - 1;
  }

  // The first unused exchange the request meets, marked used; -1 when none.
  int take(size_t request, std::string_view user, std::string_view role) {
    const std::lock_guard lock(mu);
    for (size_t i = 0; i < transcript.exchanges.size(); ++i) {
      if (used[i] || !exchange_matches(transcript.exchanges[i], user, role)) continue;
      used[i] = true;
      received[request].exchange = static_cast<int>(i);
      return static_cast<int>(i);
    }
    return -1;
  }

  // Waits `seconds` or until stop(); false when stopping.
  bool wait(double seconds) {
    std::unique_lock lock(mu);
    return !wake.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return stopping; });
  }

  void chat(const httplib::Request& req, httplib::Response& res) {
    const size_t index = record(req);
    const auto body = parse_untrusted_json(req.body);
    if (!body || !body->is_object() || !body->contains("messages") ||
        !(*body)["messages"].is_array()) {
      res.status = 400;
      res.set_content(error_body("the request is not a JSON object with a \"messages\" array"),
                      kJson);
      log(fmt::format("{} {} -> HTTP 400 (not a chat request)", req.method, req.path));
      return;
    }
    const std::string user = last_user_message(*body);
    const std::string role = req.get_header_value("X-Kforge-Role");
    const int n = take(index, user, role);
    if (n < 0) {
      res.status = 410;
      res.set_content(
          error_body(fmt::format("the transcript has no exchange left for this request (role "
                                 "'{}', last user message begins '{}')",
                                 excerpt(role, 32), excerpt(user, 60))),
          kJson);
      log(fmt::format("{} {} -> no exchange left: HTTP 410", req.method, req.path));
      return;
    }
    const Exchange& e = transcript.exchanges[static_cast<size_t>(n)];
    if (e.delay_s > 0 && !wait(e.delay_s)) {
      res.status = 503;
      res.set_content(error_body("the replay server is stopping"), kJson);
      return;
    }
    res.status = e.status;
    if (!e.retry_after.empty()) res.set_header("Retry-After", e.retry_after);
    const std::string reply = exchange_body(e, *body, n);
    if (e.drop) {
      // The headers promise the whole body; the provider sends none of it and fails, so the
      // server closes the connection mid-answer.
      res.set_content_provider(reply.size() + 1, kJson,
                               [](size_t, size_t, httplib::DataSink&) { return false; });
      log(fmt::format("{} {} -> exchange {}: dropped", req.method, req.path, n));
      return;
    }
    res.set_content(reply, kJson);
    log(fmt::format("{} {} -> exchange {}: HTTP {}", req.method, req.path, n, e.status));
  }

  void models(const httplib::Request& req, httplib::Response& res) {
    record(req);
    nlohmann::json data = nlohmann::json::array();
    for (const std::string& m : transcript.models) {
      nlohmann::json entry = {{"id", m}, {"object", "model"}, {"owned_by", "kforge-replay"}};
      if (transcript.context_length) entry["context_length"] = *transcript.context_length;
      data.push_back(std::move(entry));
    }
    res.set_content(dump_json({{"object", "list"}, {"data", data}}), kJson);
    log(fmt::format("{} {} -> {} models", req.method, req.path, transcript.models.size()));
  }
};

ReplayServer::ReplayServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

Expected<std::unique_ptr<ReplayServer>> ReplayServer::start(Transcript transcript,
                                                            ReplayServerOptions options) {
  auto s = std::make_unique<State>();
  s->used.assign(transcript.exchanges.size(), false);
  s->transcript = std::move(transcript);
  s->options = std::move(options);
  State* st = s.get();
  auto chat = [st](const httplib::Request& q, httplib::Response& r) { st->chat(q, r); };
  auto models = [st](const httplib::Request& q, httplib::Response& r) { st->models(q, r); };
  for (const char* prefix : {"/v1", ""}) {
    st->http.Post(std::string(prefix) + "/chat/completions", chat);
    st->http.Get(std::string(prefix) + "/models", models);
  }
  st->http.set_payload_max_length(kMaxTranscriptBytes);
  st->http.set_tcp_nodelay(true);
  // httplib's default sets SO_REUSEPORT, which lets a second server bind the same port and
  // silently take half the requests: SO_REUSEADDR only (a restart may reuse a closing port).
  st->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  st->http.set_read_timeout(5, 0);
  st->http.set_write_timeout(5, 0);
  const std::string& host = st->options.host;
  if (st->options.port == 0) {
    st->port = st->http.bind_to_any_port(host);
  } else if (st->http.bind_to_port(host, st->options.port)) {
    st->port = st->options.port;
  } else {
    st->port = -1;
  }
  if (st->port <= 0)
    return Status::error(fmt::format("could not listen on {}:{}", excerpt(host), st->options.port));
  st->thread = std::thread([st] {
    st->http.listen_after_bind();
    st->listen_returned = true;
  });
  // stop() only stops a server that is running: wait until it is (or could not run).
  while (!st->http.is_running() && !st->listen_returned)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<ReplayServer>(new ReplayServer(std::move(s)));
}

ReplayServer::~ReplayServer() {
  stop();
}

int ReplayServer::port() const {
  return state_->port;
}

std::string ReplayServer::base_url() const {
  const std::string& h = state_->options.host;
  const bool v6 = h.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}/v1", v6 ? "[" : "", h, v6 ? "]" : "", state_->port);
}

void ReplayServer::stop() {
  {
    const std::lock_guard lock(state_->mu);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  state_->http.stop();
  if (state_->thread.joinable()) state_->thread.join();
}

std::vector<ReceivedRequest> ReplayServer::received() const {
  const std::lock_guard lock(state_->mu);
  return state_->received;
}

size_t ReplayServer::exchanges_left() const {
  const std::lock_guard lock(state_->mu);
  size_t n = 0;
  for (bool u : state_->used) n += u ? 0 : 1;
  return n;
}

}  // namespace kf::llm
