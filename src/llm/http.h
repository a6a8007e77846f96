// One HTTP exchange over libcurl, with every handle owned (RAII) and every limit explicit: the
// transport under ChatClient. It knows nothing of chat completions or retries.
//
//   HttpSession http;
//   HttpResponse r = http.send({.url = u, .body = json, .headers = {"Content-Type: ..."},
//                               .timeout_s = 30, .connect_timeout_s = 5, .max_bytes = 8 << 20});
//   if (r.failure != TransportFailure::none) ... r.detail ...; else use(r.status, r.body);
//
// A session reuses its connection between sends and is not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace kf::llm {

enum class TransportFailure {
  none,       // an HTTP answer arrived (any status)
  timeout,    // connect or whole-request limit passed
  connect,    // refused, unreachable, name not resolved
  dropped,    // the connection closed before a whole answer
  too_large,  // the body passed max_bytes (the transfer was stopped)
  other,      // anything else curl reports (TLS, malformed URL, ...)
};

struct HttpRequest {
  bool post = true;  // POST `body`; false: GET
  std::string url;
  std::string body;
  std::vector<std::string> headers;  // "Name: value"
  double timeout_s = 60, connect_timeout_s = 10;
  size_t max_bytes = 8u << 20;
};

struct HttpResponse {
  TransportFailure failure = TransportFailure::none;
  std::string detail;  // curl's words when failure != none
  long status = 0;
  std::string body;
  std::string retry_after;  // the Retry-After header's value, "" when absent
  double latency_s = 0;
};

class HttpSession {
 public:
  HttpSession();
  ~HttpSession();
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;

  HttpResponse send(const HttpRequest& request);

 private:
  struct Handle;
  std::unique_ptr<Handle> handle_;
};

}  // namespace kf::llm
