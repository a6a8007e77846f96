// A connection to Redis (hiredis), for the evaluation broker: one RAII handle, commands as
// argument vectors (no format strings: job text is untrusted and binary-safe), replies copied
// into a plain tree so no hiredis object outlives the call.
//
//   auto url = RedisUrl::parse("redis://:secret@10.0.0.5:6379/0");
//   auto r = Redis::connect(*url, 5.0);
//   auto reply = r->command({"XADD", "kforge:jobs:abc", "*", "job", text});
//   if (!reply) return reply.error();            // connection lost, or Redis said ERR
//
// Authentication: the URL's password, or $KFORGE_REDIS_PASSWORD when the URL has none (so it
// stays out of process lists and shell history). A Redis error reply is an error here; a nil
// reply is a Reply of type nil.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "support/status.h"

struct redisContext;

namespace kf::broker {

struct RedisUrl {
  std::string host = "127.0.0.1";
  int port = 6379;
  std::string user, password;  // empty: no AUTH (unless $KFORGE_REDIS_PASSWORD is set)
  int db = 0;
  // redis://[[user]:password@]host[:port][/db], or redis://user@host... (an ACL user whose
  // password is in the environment). Fails naming what is wrong.
  static Expected<RedisUrl> parse(const std::string& text);
  // The URL with its password hidden, for messages.
  std::string display() const;
  // The URL without its password, for the store (a resumed run reads the password again from
  // the command line or $KFORGE_REDIS_PASSWORD).
  std::string without_credentials() const;
};

struct Reply {
  enum class Type { nil, string, integer, array, status };
  Type type = Type::nil;
  std::string str;  // string and status
  int64_t integer = 0;
  std::vector<Reply> elements;

  bool is_nil() const { return type == Type::nil; }
};

class Redis {
 public:
  // Connects (and authenticates, and selects the db) within `timeout_s`. Fails with a message
  // naming the address when Redis is not reachable or refuses the password.
  static Expected<Redis> connect(const RedisUrl& url, double timeout_s);
  Redis(Redis&&) noexcept;
  Redis& operator=(Redis&&) noexcept;
  ~Redis();

  // Runs one command; waits at most the connection's timeout plus `extra_wait_s` (a blocking
  // XREADGROUP waits its BLOCK time). Fails when the connection is lost or Redis replies ERR.
  Expected<Reply> command(const std::vector<std::string>& argv, double extra_wait_s = 0);
  const RedisUrl& url() const { return url_; }

 private:
  Redis() = default;
  struct Free {
    void operator()(redisContext* c) const;
  };
  std::unique_ptr<redisContext, Free> ctx_;
  RedisUrl url_;
  double timeout_s_ = 5;
};

}  // namespace kf::broker
