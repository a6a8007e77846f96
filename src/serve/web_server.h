// `kforge serve`: the run store in the browser. A real HTTP server (cpp-httplib) serves one page
// (its HTML, script and style are compiled into the binary: the page needs no network) and a
// JSON API over the store: the runs, a run's graph and best-so-far curve (drawn by the report's
// SVG code, report/svg.h), a node's code, diff from its parent, plan, verdict and roofline, a
// stream of updates as evaluations land, and the steering of a chat run (chat/session.h) that a
// terminal may have started: the same commands, and an edit of the code in the page.
//
//   auto s = WebServer::start({.port = 0, .store = db});   // 0: any free port
//   fmt::print("{}\n", (*s)->url());                       // http://127.0.0.1:PORT/#token=...
//   (*s)->wait();                                           // until stop() or a signal
//
// Security (docs/serve.md). Loopback by default; another address needs an explicit --token.
// Every API request carries the session token in the X-Kforge-Token header (the page reads it
// from the URL's fragment, which browsers never send); the event stream, which cannot set a
// header, takes it as a query parameter and only reads. A request whose Host is not this
// server's address (DNS rebinding) or whose Origin is another site is refused, state-changing
// requests must be JSON POSTs (no form can send one cross-site without a preflight, which the
// server never grants), and bodies are bounded. Nothing from the browser names a file: runs and
// nodes are store ids, commands are a fixed list (no `edit` with an editor, no `export` to a
// chosen folder), and an edit's text is judged like any candidate.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "support/status.h"

namespace kf::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8470;    // 0: any free port
  std::string token;  // "": a random one (required when host is not loopback)
  std::filesystem::path store;
  std::function<void(const std::string&)> log;  // one line per request ("" : silent)
};

class WebServer {
 public:
  static Expected<std::unique_ptr<WebServer>> start(const ServeOptions& o);
  ~WebServer();
  int port() const;
  // The page's address with the token in its fragment.
  std::string url() const;
  void wait();
  void stop();

  struct State;

 private:
  explicit WebServer(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
bool is_loopback(const std::string& host);

}  // namespace kf::serve
