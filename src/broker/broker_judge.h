// The coordinator's side of the broker: a Judge whose measurements run on `kforge worker`s.
//
//   auto j = BrokerJudge::open({.url = url, .scope = run_id, .task_dir = dir, .identity = id});
//   j->machine();                         // the workers' machine: what to generate code for
//   j->submit(task, source, options);     // publish a batch's jobs first (they run at once) ...
//   auto r = j->judge(task, source, options);   // ... then wait for each result
//
// Design notes.
// - A job is published once per run: its id is the hash of its scope (the run), class, task,
//   source and options, and publishing adds the id to kforge:queued:SCOPE and the job to the
//   stream in one script. A coordinator killed and resumed publishes the same ids: a job still
//   queued or being judged is waited for, a job done is read from the results hash; none is
//   judged twice, none is lost.
// - The first result of a job wins (the workers write it with HSETNX); the run log stores it
//   once, keyed by the evaluation key (the candidate, the task, the class's fingerprint, the
//   threads), so a job judged again after a worker died still lands in the store exactly once.
// - Hardware. Every job names one class (a machine fingerprint) and only workers of that class
//   read it; evaluation keys hold the class's fingerprint, so results from other hardware never
//   mix in a comparison. A result from a worker of another class is refused.
// - Waiting. Queue wait and run time are kept apart: while a worker of the class is alive
//   (its registration is refreshed by heartbeats) a job is waited for however long it runs (the
//   workers enforce the run limits); with none alive for `wait_for_worker_s` the judge fails,
//   saying which workers are there and of which class.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/judge.h"
#include "broker/redis.h"
#include "harness/machine.h"
#include "task/task_identity.h"

namespace kf::broker {

struct WorkerInfo {
  std::string name, host, fingerprint;
  MachineInfo machine;
};

// The workers whose registration is alive. Entries that cannot be read are skipped.
Expected<std::vector<WorkerInfo>> live_workers(Redis& r);

struct BrokerJudgeOptions {
  RedisUrl url;
  std::string scope;     // the run id: results go to this run's keys
  std::string hw_class;  // "": this machine's class if a worker of it is alive, else the one class
  std::string local_fingerprint;
  std::filesystem::path task_dir;
  TaskIdentity identity;
  double wait_for_worker_s = 300;
  std::function<void(const std::string&)> progress;  // may be empty
};

class BrokerJudge : public agents::Judge {
 public:
  // Connects, uploads the task, picks the class (waiting up to wait_for_worker_s for a worker
  // when none is alive). Fails when Redis is unreachable, several classes are alive and none was
  // named, or no worker of the class comes.
  static Expected<std::unique_ptr<BrokerJudge>> open(const BrokerJudgeOptions& o);

  Expected<RunResult> judge(const Task& task, const std::string& source,
                            const EvalOptions& options) override;
  Status submit(const Task& task, const std::string& source, const EvalOptions& options) override;
  bool remote() const override { return true; }
  std::string name() const override { return "broker"; }

  const MachineInfo& machine() const { return machine_; }
  const std::string& hw_class() const { return machine_.fingerprint; }

 private:
  explicit BrokerJudge(BrokerJudgeOptions o) : o_(std::move(o)) {}
  Status pick_class();
  Expected<std::string> publish(const std::string& source, const EvalOptions& options);
  Expected<std::optional<RunResult>> read_result(const std::string& id);
  // Reads the done stream for up to a second; says so once about results this run never asked.
  Status watch();
  // Fails when no worker of the class has been alive for wait_for_worker_s.
  Status check_workers(double& none_since);
  void say(const std::string& s) const {
    if (o_.progress) o_.progress(s);
  }

  BrokerJudgeOptions o_;
  std::optional<Redis> redis_;
  MachineInfo machine_;
  std::set<std::string> published_;
  std::string last_done_ = "0-0";
  std::set<std::string> unknown_said_;
};

}  // namespace kf::broker
