// The JSON API of `kforge serve` (web_server.h routes to it): each call opens the store for
// itself (SQLite in WAL mode: readers never wait for a writer, and a terminal session's writes
// are seen at once), and a chat run steered from the browser keeps one session per run, with its
// own connection, one command at a time (a second while one runs is refused: 409).
//
//   Api api{.store_path = db};
//   ApiReply r = api.run("r20261207-0746");     // r.status 200, r.body {"run": .., "nodes": ..}
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>

#include "chat/session.h"
#include "store/sqlite_store.h"

namespace kf::serve {

struct ApiReply {
  int status = 200;
  nlohmann::json body;
};

class Api {
 public:
  std::filesystem::path store_path;

  ~Api();
  // {"runs": [{id, task, mode, state, brain, created_at, best_candidate, best_median_s}]}
  ApiReply runs();
  // A run: its record, its graph's nodes (numbered in the order they joined), the graph and the
  // best-so-far curve as SVG, the reference's and the library's times, whether it can be steered.
  ApiReply run(const std::string& id);
  // A node: its move, proposer, plan, verdict, times, roofline, code (highlighted) and its diff
  // from its parent.
  ApiReply node(const std::string& run, const std::string& key);
  // {"line": "plan 3"}: a chat command from the browser's list (chat/session.h) on a chat run.
  ApiReply command(const std::string& run, const std::string& body);
  // {"source": "...", "schedule": false, "node": KEY}: the person's edit of node KEY (default:
  // the current one), judged as its child.
  ApiReply edit(const std::string& run, const std::string& body);
  // Asks the run's running search to stop after the evaluation in flight.
  ApiReply stop(const std::string& run);
  // What changes when the run moves on (its attempts, state, last update), for the event stream,
  // which opens the store once (open_store) and asks this on every poll.
  static std::string version(Store& store, const std::string& run);
  Expected<std::unique_ptr<SqliteStore>> open_store() const { return open(); }
  // Ends the browser's chat sessions as `quit` would (summary, best.cpp).
  void close_sessions();

 private:
  struct Live {
    std::unique_ptr<SqliteStore> store;
    std::unique_ptr<chat::Session> session;
    std::mutex busy;
  };
  Expected<std::unique_ptr<SqliteStore>> open() const;
  Expected<Live*> live(const std::string& run);
  // Runs `f` on the run's session unless another command is running on it.
  ApiReply steer(const std::string& run,
                 const std::function<Expected<std::string>(chat::Session&)>& f);

  std::mutex mu_;  // guards live_
  std::map<std::string, std::unique_ptr<Live>> live_;
};

}  // namespace kf::serve
