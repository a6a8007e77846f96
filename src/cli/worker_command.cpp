#include "cli/worker_command.h"

#include <fmt/format.h>

#include <map>
#include <memory>
#include <vector>

#include "broker/broker_judge.h"
#include "broker/protocol.h"
#include "broker/worker.h"
#include "cli/cli_output.h"
#include "support/interrupt.h"

namespace kf {
namespace {

struct WorkerArgs {
  std::string broker, name, cxx = "g++";
  int jobs = 1, max_jobs = 0;
  double reclaim_after = 30, heartbeat = 2;
};

int run_worker_command(const WorkerArgs& a) {
  auto url = broker::RedisUrl::parse(a.broker);
  if (!url) {
    print_error(url.error().message());
    return 2;
  }
  install_interrupt_handler();
  Status s = broker::run_worker({.url = *url,
                                 .name = a.name,
                                 .jobs = a.jobs,
                                 .cxx = a.cxx,
                                 .heartbeat_s = a.heartbeat,
                                 .reclaim_after_s = a.reclaim_after,
                                 .max_jobs = a.max_jobs,
                                 .log = [](const std::string& line) {
                                   fmt::print(stderr, "{}\n", terminal_text(line));
                                   std::fflush(stderr);
                                 }});
  if (!s.ok()) {
    print_error(s.message());
    return 1;
  }
  return 0;
}

// `kforge workers --json` (docs/schemas/workers.schema.json).
constexpr const char* kWorkersSchema = "kforge-workers/1";

// The workers alive, by class, and each class's queue: what a person checks before a search.
int run_workers_command(const std::string& broker_url, bool json) {
  auto url = broker::RedisUrl::parse(broker_url);
  if (!url) {
    print_error(url.error().message());
    return 2;
  }
  auto r = broker::Redis::connect(*url, 5.0);
  if (!r) {
    print_error(r.error().message());
    return 1;
  }
  auto ws = broker::live_workers(*r);
  if (!ws) {
    print_error(ws.error().message());
    return 1;
  }
  std::map<std::string, std::vector<const broker::WorkerInfo*>> by_class;
  for (const broker::WorkerInfo& w : *ws) by_class[w.fingerprint].push_back(&w);
  nlohmann::json classes = nlohmann::json::array();
  for (const auto& [fp, members] : by_class) {
    const MachineInfo& m = members.front()->machine;
    auto queued = r->command({"XLEN", broker::jobs_key(fp)});
    auto pending = r->command({"XPENDING", broker::jobs_key(fp), broker::kGroup});
    nlohmann::json names = nlohmann::json::array();
    for (const broker::WorkerInfo* w : members)
      names.push_back({{"name", w->name}, {"host", w->host}});
    classes.push_back(
        {{"class", fp},
         {"cpu_model", m.cpu_model},
         {"cores", m.cores},
         {"queued", queued ? queued->integer : 0},
         {"judging", pending && !pending->elements.empty() ? pending->elements[0].integer : 0},
         {"workers", names}});
  }
  if (json) {
    print_json(kWorkersSchema, {{"broker", url->display()}, {"classes", classes}});
    return 0;
  }
  if (classes.empty()) fmt::print("no worker is alive on {}\n", url->display());
  for (const nlohmann::json& c : classes) {
    fmt::print("class {}: {}, {} cores; {} job(s) in the stream, {} being judged\n",
               c["class"].get<std::string>(), terminal_text(c["cpu_model"].get<std::string>()),
               c["cores"].get<int>(), c["queued"].get<int64_t>(), c["judging"].get<int64_t>());
    for (const nlohmann::json& w : c["workers"])
      fmt::print("  {:<24} on {}\n", terminal_text(w["name"].get<std::string>()),
                 terminal_text(w["host"].get<std::string>()));
  }
  return 0;
}

}  // namespace

void add_broker_options(CLI::App* cmd, BrokerArgs& b) {
  cmd->add_option("--broker", b.url,
                  "Judge on `kforge worker`s through this Redis: redis://[:PASSWORD@]HOST[:PORT]"
                  "[/DB] (the password may come from $KFORGE_REDIS_PASSWORD; docs/workers.md)");
  cmd->add_option("--hardware", b.hardware,
                  "With --broker: the workers' machine class (a fingerprint) when workers of "
                  "several are alive");
  cmd->add_option("--broker-wait", b.wait_s,
                  "With --broker: seconds jobs may wait while no worker of the class is alive "
                  "(default 300)")
      ->check(CLI::Range(1.0, 86400.0));
}

void add_worker_command(CLI::App& app) {
  auto a = std::make_shared<WorkerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "worker", "Judge evaluation jobs from a Redis broker on this machine (docs/workers.md)");
  cmd->add_option("--broker", a->broker, "redis://[:PASSWORD@]HOST[:PORT][/DB]")->required();
  cmd->add_option("--name", a->name, "This worker's name (default HOST-PID)");
  cmd->add_option("--jobs,-j", a->jobs, "Jobs taken at once: compiles overlap, timings never do")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--cxx", a->cxx, "The compiler whose version is part of the machine's class")
      ->check(CLI::IsMember({"g++", "clang++"}));
  cmd->add_option("--reclaim-after", a->reclaim_after,
                  "Seconds without a heartbeat after which another worker's job is taken over "
                  "(default 30)")
      ->check(CLI::Range(1.0, 86400.0));
  cmd->add_option("--heartbeat", a->heartbeat, "Seconds between heartbeats (default 2)")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--max-jobs", a->max_jobs, "Leave after this many results (default: never)")
      ->check(CLI::Range(0, 1000000));
  cmd->callback([a] { throw CLI::RuntimeError(run_worker_command(*a)); });

  struct ListArgs {
    std::string url;
    bool json = false;
  };
  auto l = std::make_shared<ListArgs>();
  CLI::App* list = app.add_subcommand(
      "workers", "List the workers alive on a Redis broker, by machine class, with their queues");
  list->add_option("--broker", l->url, "redis://[:PASSWORD@]HOST[:PORT][/DB]")->required();
  list->add_flag("--json", l->json,
                 fmt::format("Print the classes and their workers as one JSON document (schema "
                             "\"{}\", docs/json.md)",
                             kWorkersSchema));
  list->callback([l] { throw CLI::RuntimeError(run_workers_command(l->url, l->json)); });
}

}  // namespace kf
