#include "broker/redis.h"

#include <fmt/format.h>
#include <hiredis/hiredis.h>
#include <sys/time.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace kf::broker {
namespace {

timeval to_timeval(double s) {
  const double whole = std::floor(s);
  return {static_cast<time_t>(whole), static_cast<suseconds_t>((s - whole) * 1e6)};
}

bool parse_int(std::string_view s, int lo, int hi, int& out) {
  int v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < lo || v > hi) return false;
  out = v;
  return true;
}

// Copies a reply tree; depth is bounded (our replies nest at most 4 levels: XAUTOCLAIM).
Reply copy_reply(const redisReply* r, int depth) {
  Reply out;
  if (r == nullptr || depth > 8) return out;
  switch (r->type) {
    case REDIS_REPLY_STRING:
      out.type = Reply::Type::string;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      out.type = Reply::Type::status;
      out.str.assign(r->str, r->len);
      break;
    case REDIS_REPLY_INTEGER:
      out.type = Reply::Type::integer;
      out.integer = r->integer;
      break;
    case REDIS_REPLY_ARRAY:
      out.type = Reply::Type::array;
      out.elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; ++i)
        out.elements.push_back(copy_reply(r->element[i], depth + 1));
      break;
    default:
      break;
  }
  return out;
}

}  // namespace

Expected<RedisUrl> RedisUrl::parse(const std::string& text) {
  constexpr std::string_view scheme = "redis://";
  if (text.compare(0, scheme.size(), scheme) != 0)
    return Status::error(
        fmt::format("broker URL '{}': expected redis://[:PASSWORD@]HOST[:PORT][/DB]", text));
  std::string_view rest = std::string_view(text).substr(scheme.size());
  RedisUrl u;
  if (const size_t at = rest.rfind('@'); at != std::string_view::npos) {
    const std::string_view cred = rest.substr(0, at);
    rest = rest.substr(at + 1);
    const size_t colon = cred.find(':');
    if (colon == std::string_view::npos) {
      u.user = std::string(cred);  // an ACL user whose password comes from the environment
    } else {
      u.user = std::string(cred.substr(0, colon));
      u.password = std::string(cred.substr(colon + 1));
    }
  }
  if (const size_t slash = rest.find('/'); slash != std::string_view::npos) {
    const std::string_view db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
    if (!db.empty() && !parse_int(db, 0, 1 << 16, u.db))
      return Status::error(fmt::format("broker URL: database '{}' is not a number", db));
  }
  if (const size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    if (!parse_int(rest.substr(colon + 1), 1, 65535, u.port))
      return Status::error(
          fmt::format("broker URL: port '{}' is not in 1-65535", rest.substr(colon + 1)));
    rest = rest.substr(0, colon);
  }
  if (!rest.empty()) u.host = std::string(rest);
  if (u.host.size() > 255) return Status::error("broker URL: the host name is too long");
  return u;
}

std::string RedisUrl::display() const {
  std::string auth = password.empty() ? (user.empty() ? "" : user + "@")
                                      : (user.empty() ? ":***@" : user + ":***@");
  return fmt::format("redis://{}{}:{}/{}", auth, host, port, db);
}

std::string RedisUrl::without_credentials() const {
  return fmt::format("redis://{}{}:{}/{}", user.empty() ? "" : user + "@", host, port, db);
}

void Redis::Free::operator()(redisContext* c) const {
  if (c != nullptr) redisFree(c);
}

Redis::Redis(Redis&&) noexcept = default;
Redis& Redis::operator=(Redis&&) noexcept = default;
Redis::~Redis() = default;

Expected<Redis> Redis::connect(const RedisUrl& url, double timeout_s) {
  Redis r;
  r.url_ = url;
  r.timeout_s_ = timeout_s;
  r.ctx_.reset(redisConnectWithTimeout(url.host.c_str(), url.port, to_timeval(timeout_s)));
  if (!r.ctx_ || r.ctx_->err != 0)
    return Status::error(fmt::format("cannot reach Redis at {}: {}", url.display(),
                                     r.ctx_ ? r.ctx_->errstr : "out of memory"));
  redisSetTimeout(r.ctx_.get(), to_timeval(timeout_s));
  std::string password = url.password;
  if (password.empty())
    if (const char* env = std::getenv("KFORGE_REDIS_PASSWORD")) password = env;
  if (!password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!url.user.empty()) auth.push_back(url.user);
    auth.push_back(password);
    if (auto a = r.command(auth); !a)
      return Status::error(
          fmt::format("Redis at {} refused the password: {}", url.display(), a.error().message()));
  }
  if (url.db != 0)
    if (auto s = r.command({"SELECT", std::to_string(url.db)}); !s) return s.error();
  if (auto p = r.command({"PING"}); !p)
    return Status::error(
        fmt::format("Redis at {} does not answer: {}", url.display(), p.error().message()));
  return r;
}

Expected<Reply> Redis::command(const std::vector<std::string>& argv, double extra_wait_s) {
  if (!ctx_ || ctx_->err != 0)
    return Status::error(fmt::format("the connection to Redis at {} is lost", url_.display()));
  if (extra_wait_s > 0) redisSetTimeout(ctx_.get(), to_timeval(timeout_s_ + extra_wait_s));
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  auto* raw = static_cast<redisReply*>(
      redisCommandArgv(ctx_.get(), static_cast<int>(args.size()), args.data(), lens.data()));
  if (extra_wait_s > 0) redisSetTimeout(ctx_.get(), to_timeval(timeout_s_));
  if (raw == nullptr)
    return Status::error(fmt::format("Redis at {}: {}", url_.display(),
                                     ctx_->errstr[0] != 0 ? ctx_->errstr : "no reply"));
  std::unique_ptr<redisReply, void (*)(void*)> reply(raw, freeReplyObject);
  if (raw->type == REDIS_REPLY_ERROR)
    return Status::error(fmt::format("Redis: {}", std::string_view(raw->str, raw->len)));
  return copy_reply(raw, 0);
}

}  // namespace kf::broker
