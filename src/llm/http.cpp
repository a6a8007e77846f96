#include "llm/http.h"

#include <curl/curl.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <mutex>
#include <string_view>

#include "support/check.h"

namespace kf::llm {
namespace {

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlPtr = std::unique_ptr<CURL, CurlDeleter>;
using SlistPtr = std::unique_ptr<curl_slist, SlistDeleter>;

void global_init() {
  static std::once_flag once;
  std::call_once(once, [] { KF_CHECK(curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK); });
}

struct Sink {
  std::string* body;
  size_t max_bytes;
  bool overflow = false;
};

size_t on_body(char* data, size_t size, size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  const size_t bytes = size * n;
  if (sink->body->size() + bytes > sink->max_bytes) {
    sink->overflow = true;
    return 0;  // curl stops the transfer with CURLE_WRITE_ERROR
  }
  sink->body->append(data, bytes);
  return bytes;
}

// Keeps the last Retry-After header (a redirect or 100-continue may precede the answer).
size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* retry_after = static_cast<std::string*>(user);
  const std::string_view line(data, size * n);
  constexpr std::string_view kName = "retry-after:";
  if (line.size() > kName.size() && line.size() < 256) {
    bool match = true;
    for (size_t i = 0; i < kName.size() && match; ++i)
      match = std::tolower(static_cast<unsigned char>(line[i])) == kName[i];
    if (match) {
      std::string_view v = line.substr(kName.size());
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == '\r' || v.back() == '\n' || v.back() == ' '))
        v.remove_suffix(1);
      *retry_after = std::string(v);
    }
  }
  return size * n;
}

TransportFailure classify(CURLcode c, bool overflow) {
  if (overflow) return TransportFailure::too_large;
  switch (c) {
    case CURLE_OPERATION_TIMEDOUT:
      return TransportFailure::timeout;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return TransportFailure::connect;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
      return TransportFailure::dropped;
    default:
      return TransportFailure::other;
  }
}

long millis(double s) {
  return static_cast<long>(std::ceil(s * 1000));
}

// Loopback needs no proxy, and an http_proxy in the environment must not catch it.
bool is_loopback(std::string_view url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return false;
  const std::string_view rest = url.substr(scheme + 3);
  for (std::string_view h : {"127.0.0.1", "localhost", "[::1]"})
    if (rest.starts_with(h) &&
        (rest.size() == h.size() || rest[h.size()] == ':' || rest[h.size()] == '/'))
      return true;
  return false;
}

}  // namespace

struct HttpSession::Handle {
  CurlPtr curl;
};

HttpSession::HttpSession() : handle_(std::make_unique<Handle>()) {
  global_init();
  handle_->curl.reset(curl_easy_init());
  KF_CHECK(handle_->curl != nullptr) << "curl_easy_init failed";
}

HttpSession::~HttpSession() = default;

HttpResponse HttpSession::send(const HttpRequest& request) {
  CURL* c = handle_->curl.get();
  curl_easy_reset(c);  // keeps the connection cache, drops the last request's options
  HttpResponse r;
  Sink sink{&r.body, request.max_bytes};
  SlistPtr headers;
  for (const std::string& h : request.headers) {
    curl_slist* next = curl_slist_append(headers.get(), h.c_str());
    KF_CHECK(next != nullptr) << "curl_slist_append failed";
    (void)headers.release();
    headers.reset(next);
  }
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, millis(request.timeout_s));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, millis(request.connect_timeout_s));
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.retry_after);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  if (is_loopback(request.url)) curl_easy_setopt(c, CURLOPT_NOPROXY, "*");
  if (request.post) {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  } else {
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
  }
  const auto start = std::chrono::steady_clock::now();
  const CURLcode code = curl_easy_perform(c);
  r.latency_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.status);
  if (code != CURLE_OK) {
    r.failure = classify(code, sink.overflow);
    r.detail = error[0] != '\0' ? std::string(error) : std::string(curl_easy_strerror(code));
  }
  // The options point into this call's request and headers: drop them before those go.
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  return r;
}

}  // namespace kf::llm
