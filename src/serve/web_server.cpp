#include "serve/web_server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <atomic>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>

#include "serve/serve_api.h"
#include "serve/web_assets.h"
#include "support/json_text.h"
#include "support/text_scan.h"

namespace kf::serve {
namespace {

// The most a request body may hold: an edited kernel is at most 1 MiB (StartingPoint).
constexpr size_t kMaxBody = (1 << 20) + 4096;
// Seconds a connection may wait for the client to send (or take) the next bytes.
constexpr int kReadTimeoutS = 5;

std::string random_token() {
  std::random_device rd;
  std::string t;
  for (int i = 0; i < 4; ++i) t += fmt::format("{:08x}", rd());
  return t;
}

bool same_token(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() != b.size();
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= a[i] ^ b[i];
  return diff == 0;
}

void json_reply(httplib::Response& res, int status, const nlohmann::json& body) {
  res.status = status;
  res.set_content(dump_json(body), "application/json");
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "localhost" || host == "::1" || host.starts_with("127.");
}

struct WebServer::State {
  ServeOptions o;
  std::string token;
  int port = 0;
  httplib::Server http;
  std::thread thread;
  std::atomic<bool> stopping{false};
  Api api;

  // Whether the request may go on; when not, the reply is written.
  bool admit(const httplib::Request& req, httplib::Response& res) const;
  void routes();
};

bool WebServer::State::admit(const httplib::Request& req, httplib::Response& res) const {
  // DNS rebinding: a page of another site that resolves its name to this address still sends
  // its own name as the Host.
  const std::string host = req.get_header_value("Host");
  std::set<std::string> hosts = {fmt::format("{}:{}", o.host, port)};
  if (is_loopback(o.host))
    for (const char* h : {"127.0.0.1", "localhost", "[::1]"})
      hosts.insert(fmt::format("{}:{}", h, port));
  if (!hosts.count(host)) {
    json_reply(res, 403, {{"error", "this server answers only to its own address"}});
    return false;
  }
  const std::string origin = req.get_header_value("Origin");
  if (!origin.empty() && origin != "http://" + host) {
    json_reply(res, 403, {{"error", "cross-site requests are refused"}});
    return false;
  }
  if (!req.path.starts_with("/api/")) return true;  // the page itself holds no data
  const bool stream = req.method == "GET" && req.path.ends_with("/events");
  const std::string given =
      stream ? req.get_param_value("token") : req.get_header_value("X-Kforge-Token");
  if (!same_token(given, token)) {
    json_reply(res, 401, {{"error", "a valid X-Kforge-Token is required"}});
    return false;
  }
  if (req.method == "POST" &&
      !req.get_header_value("Content-Type").starts_with("application/json")) {
    json_reply(res, 415, {{"error", "POST bodies are JSON (Content-Type: application/json)"}});
    return false;
  }
  if (req.method != "GET" && req.method != "POST") {
    json_reply(res, 405, {{"error", "GET and POST only"}});
    return false;
  }
  return true;
}

void WebServer::State::routes() {
  for (const Asset& a : web_assets())
    http.Get(a.path, [&a](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(a.content), a.type);
    });
  auto reply = [](httplib::Response& res, const ApiReply& r) { json_reply(res, r.status, r.body); };
  http.Get("/api/runs", [this, reply](const httplib::Request&, httplib::Response& res) {
    reply(res, api.runs());
  });
  http.Get(R"(/api/runs/([A-Za-z0-9_-]+))",
           [this, reply](const httplib::Request& req, httplib::Response& res) {
             reply(res, api.run(req.matches[1]));
           });
  http.Get(R"(/api/runs/([A-Za-z0-9_-]+)/nodes/([0-9a-f]+))",
           [this, reply](const httplib::Request& req, httplib::Response& res) {
             reply(res, api.node(req.matches[1], req.matches[2]));
           });
  http.Post(R"(/api/runs/([A-Za-z0-9_-]+)/command)",
            [this, reply](const httplib::Request& req, httplib::Response& res) {
              reply(res, api.command(req.matches[1], req.body));
            });
  http.Post(R"(/api/runs/([A-Za-z0-9_-]+)/edit)",
            [this, reply](const httplib::Request& req, httplib::Response& res) {
              reply(res, api.edit(req.matches[1], req.body));
            });
  http.Post(R"(/api/runs/([A-Za-z0-9_-]+)/stop)",
            [this, reply](const httplib::Request& req, httplib::Response& res) {
              reply(res, api.stop(req.matches[1]));
            });
  http.Get(R"(/api/runs/([A-Za-z0-9_-]+)/events)",
           [this](const httplib::Request& req, httplib::Response& res) {
             const std::string run = req.matches[1];
             // One connection for the stream's life, not one per poll.
             auto opened = api.open_store();
             if (!opened) return json_reply(res, 500, {{"error", opened.error().message()}});
             std::shared_ptr<SqliteStore> store = std::move(*opened);
             res.set_header("Cache-Control", "no-store");
             res.set_chunked_content_provider(
                 "text/event-stream",
                 [this, run, store, last = std::string()](size_t, httplib::DataSink& sink) mutable {
                   // One line of the run's state when it changes; a comment keeps the
                   // connection alive. The stream ends with the server.
                   for (int i = 0; i < 30 && !stopping; ++i) {
                     const std::string now = Api::version(*store, run);
                     if (now != last) {
                       last = now;
                       const std::string msg = "event: update\ndata: " + now + "\n\n";
                       return sink.write(msg.data(), msg.size());
                     }
                     std::this_thread::sleep_for(std::chrono::milliseconds(300));
                   }
                   if (stopping) {
                     sink.done();
                     return true;
                   }
                   return sink.write(": alive\n\n", 9);
                 });
           });
}

WebServer::WebServer(std::unique_ptr<State> s) : s_(std::move(s)) {}

Expected<std::unique_ptr<WebServer>> WebServer::start(const ServeOptions& o) {
  if (!is_loopback(o.host) && o.token.empty())
    return Status::error(fmt::format(
        "serving on {} (not loopback) needs --token: anyone who can reach it could steer runs",
        excerpt(o.host)));
  if (!o.token.empty() && o.token.size() < 16)
    return Status::error("a --token has at least 16 characters");
  auto s = std::make_unique<State>();
  s->o = o;
  s->token = o.token.empty() ? random_token() : o.token;
  s->api.store_path = o.store;
  State* st = s.get();
  st->http.set_payload_max_length(kMaxBody);
  // A client that sends its request slowly holds a worker thread at most this long.
  st->http.set_read_timeout(kReadTimeoutS, 0);
  st->http.set_write_timeout(kReadTimeoutS, 0);
  st->http.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  st->http.set_pre_routing_handler([st](const httplib::Request& req, httplib::Response& res) {
    return st->admit(req, res) ? httplib::Server::HandlerResponse::Unhandled
                               : httplib::Server::HandlerResponse::Handled;
  });
  st->http.set_post_routing_handler([st](const httplib::Request& req, httplib::Response& res) {
    res.set_header(
        "Content-Security-Policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'");
    res.set_header("X-Content-Type-Options", "nosniff");
    res.set_header("Referrer-Policy", "no-referrer");
    if (req.path.starts_with("/api/")) res.set_header("Cache-Control", "no-store");
    if (st->o.log)
      st->o.log(fmt::format("{} {} -> {}", req.method, excerpt(req.path, 120), res.status));
  });
  st->routes();
  if (o.port == 0) {
    st->port = st->http.bind_to_any_port(o.host);
  } else if (st->http.bind_to_port(o.host, o.port)) {
    st->port = o.port;
  } else {
    st->port = -1;
  }
  if (st->port <= 0)
    return Status::error(fmt::format("could not listen on {}:{} (in use? --port picks another)",
                                     excerpt(o.host), o.port));
  st->thread = std::thread([st] { st->http.listen_after_bind(); });
  while (!st->http.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::unique_ptr<WebServer>(new WebServer(std::move(s)));
}

WebServer::~WebServer() {
  stop();
}

int WebServer::port() const {
  return s_->port;
}

std::string WebServer::url() const {
  const bool v6 = s_->o.host.find(':') != std::string::npos;
  return fmt::format("http://{}{}{}:{}/#token={}", v6 ? "[" : "", s_->o.host, v6 ? "]" : "",
                     s_->port, s_->token);
}

void WebServer::wait() {
  if (s_->thread.joinable()) s_->thread.join();
}

void WebServer::stop() {
  s_->stopping = true;
  s_->http.stop();
  if (s_->thread.joinable()) s_->thread.join();
}

}  // namespace kf::serve
