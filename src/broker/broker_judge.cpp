#include "broker/broker_judge.h"

#include <fmt/format.h>

#include <chrono>
#include <map>
#include <thread>

#include "broker/protocol.h"
#include "support/interrupt.h"

namespace kf::broker {
namespace {

// Publishes a job once per run: its id joins the run's set and the job the class's stream in one
// step, so a coordinator killed in between cannot leave one without the other.
constexpr const char* kPublishScript = R"(
redis.call('EXPIRE', KEYS[1], ARGV[3])
if redis.call('SADD', KEYS[1], ARGV[1]) == 1 then
  redis.call('XADD', KEYS[2], '*', 'job', ARGV[2])
  return 1
end
return 0)";

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string describe(const std::vector<WorkerInfo>& ws) {
  std::map<std::string, std::vector<std::string>> by_class;
  std::map<std::string, std::string> model;
  for (const WorkerInfo& w : ws) {
    by_class[w.fingerprint].push_back(w.name);
    model[w.fingerprint] = w.machine.cpu_model;
  }
  std::string out;
  for (const auto& [fp, names] : by_class)
    out += fmt::format("\n  class {} ({}): {}", fp, model[fp], fmt::join(names, ", "));
  return out.empty() ? " none" : out;
}

}  // namespace

Expected<std::vector<WorkerInfo>> live_workers(Redis& r) {
  std::vector<WorkerInfo> out;
  std::string cursor = "0";
  for (int round = 0; round < 1000; ++round) {
    auto s = r.command({"SCAN", cursor, "MATCH", "kforge:worker:*", "COUNT", "100"});
    if (!s) return s.error();
    if (s->elements.size() != 2) break;
    cursor = s->elements[0].str;
    for (const Reply& key : s->elements[1].elements) {
      auto v = r.command({"GET", key.str});
      if (!v || v->is_nil()) continue;
      const nlohmann::json j = nlohmann::json::parse(v->str, nullptr, false);
      if (!j.is_object() || !j.contains("machine")) continue;
      auto m = MachineInfo::from_json(j["machine"]);
      if (!m) continue;
      WorkerInfo w{.name = j.value("name", ""),
                   .host = j.value("host", ""),
                   .fingerprint = m->fingerprint,
                   .machine = std::move(*m)};
      if (j.value("fingerprint", "") != w.fingerprint || w.fingerprint.empty()) continue;
      out.push_back(std::move(w));
    }
    if (cursor == "0") break;
  }
  return out;
}

Expected<std::unique_ptr<BrokerJudge>> BrokerJudge::open(const BrokerJudgeOptions& o) {
  std::unique_ptr<BrokerJudge> j(new BrokerJudge(o));
  auto r = Redis::connect(o.url, 5.0);
  if (!r) return r.error();
  j->redis_.emplace(std::move(*r));
  auto bundle = bundle_task(o.task_dir, o.identity);
  if (!bundle) return bundle.error().with_context("the task for the workers");
  auto up =
      j->redis_->command({"SET", task_key(o.identity.hash), bundle_to_json(*bundle).dump(), "NX"});
  if (!up) return up.error();
  KF_RETURN_IF_ERROR(j->pick_class());
  auto g =
      j->redis_->command({"XGROUP", "CREATE", jobs_key(j->hw_class()), kGroup, "0", "MKSTREAM"});
  if (!g && g.error().message().find("BUSYGROUP") == std::string::npos) return g.error();
  // Results announced before this process started were for jobs of an earlier process of the
  // run: they are read from the results hash, not from the stream.
  auto last = j->redis_->command({"XREVRANGE", done_key(o.scope), "+", "-", "COUNT", "1"});
  if (!last) return last.error();
  if (!last->elements.empty() && !last->elements[0].elements.empty())
    j->last_done_ = last->elements[0].elements[0].str;
  return j;
}

Status BrokerJudge::pick_class() {
  const double start = now_s();
  bool said = false;
  while (true) {
    auto ws = live_workers(*redis_);
    if (!ws) return ws.error();
    std::map<std::string, const WorkerInfo*> classes;
    for (const WorkerInfo& w : *ws) classes[w.fingerprint] = &w;
    const WorkerInfo* pick = nullptr;
    if (!o_.hw_class.empty()) {
      if (classes.count(o_.hw_class)) pick = classes[o_.hw_class];
    } else if (classes.count(o_.local_fingerprint)) {
      pick = classes[o_.local_fingerprint];
    } else if (classes.size() == 1) {
      pick = classes.begin()->second;
    } else if (classes.size() > 1) {
      return Status::error(fmt::format(
          "workers of several machine classes are alive on {}; name one with --hardware CLASS "
          "(results of different machines are never compared):{}",
          o_.url.display(), describe(*ws)));
    }
    if (pick) {
      machine_ = pick->machine;
      say(fmt::format("judging on workers of class {} ({}, {} cores) through {}",
                      machine_.fingerprint, machine_.cpu_model, machine_.cores, o_.url.display()));
      return {};
    }
    if (now_s() - start > o_.wait_for_worker_s)
      return Status::error(fmt::format(
          "no worker {}has joined {} in {:.0f} s: start one with `kforge worker --broker {}`; "
          "workers alive:{}",
          o_.hw_class.empty() ? "" : "of class " + o_.hw_class + " ", o_.url.display(),
          o_.wait_for_worker_s, o_.url.display(), describe(*ws)));
    if (!said) say("waiting for a worker to join " + o_.url.display());
    said = true;
    if (interrupted()) return Status::error(kInterrupted);
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

Expected<std::string> BrokerJudge::publish(const std::string& source, const EvalOptions& options) {
  Job job{.id = {},
          .scope = o_.scope,
          .hw_class = hw_class(),
          .task_hash = o_.identity.hash,
          .source = source,
          .options = options};
  const nlohmann::json opts = eval_options_to_json(options);
  job.id = Job::make_id(job.scope, job.hw_class, job.task_hash, source, opts);
  if (published_.count(job.id)) return job.id;
  if (source.size() > kMaxSourceBytes)
    return Status::error(
        fmt::format("the candidate is over {} bytes: too big for a job", kMaxSourceBytes));
  auto p = redis_->command({"EVAL", kPublishScript, "2", queued_key(o_.scope), jobs_key(hw_class()),
                            job.id, job.to_json().dump(), std::to_string(kRunKeysTtlS)});
  if (!p) return p.error();
  published_.insert(job.id);
  return job.id;
}

Expected<std::optional<RunResult>> BrokerJudge::read_result(const std::string& id) {
  auto v = redis_->command({"HGET", results_key(o_.scope), id});
  if (!v) return v.error();
  if (v->is_nil()) return std::optional<RunResult>();
  const nlohmann::json j = nlohmann::json::parse(v->str, nullptr, false);
  auto res =
      j.is_discarded() ? Expected<JobResult>(Status::error("not JSON")) : JobResult::from_json(j);
  if (!res || res->fingerprint != hw_class() || !res->error.empty()) {
    // No measurement: forgotten, so that a resumed run publishes the job again.
    auto forget = redis_->command({"HDEL", results_key(o_.scope), id});
    if (forget) forget = redis_->command({"SREM", queued_key(o_.scope), id});
    if (!forget) return forget.error();
    published_.erase(id);
  }
  if (!res) return res.error().with_context("the result of job " + id);
  if (res->fingerprint != hw_class())
    return Status::error(fmt::format(
        "job {} was answered by worker {} on a machine of class {}, not {}: its result is not "
        "used (results of different machines are never compared)",
        id, res->worker, res->fingerprint, hw_class()));
  if (!res->error.empty())
    return Status::error(fmt::format("worker {} could not judge job {}: {}", res->worker,
                                     id.substr(0, 12), res->error));
  return std::optional<RunResult>(std::move(res->result));
}

Status BrokerJudge::watch() {
  auto x = redis_->command(
      {"XREAD", "COUNT", "100", "BLOCK", "1000", "STREAMS", done_key(o_.scope), last_done_}, 2.0);
  if (!x) return x.error();
  if (x->is_nil() || x->elements.empty() || x->elements[0].elements.size() < 2) return {};
  for (const Reply& e : x->elements[0].elements[1].elements) {
    if (e.elements.size() != 2) continue;
    last_done_ = e.elements[0].str;
    std::string id;
    const auto& f = e.elements[1].elements;
    for (size_t i = 0; i + 1 < f.size(); i += 2)
      if (f[i].str == "job") id = f[i + 1].str;
    if (published_.count(id)) continue;
    auto known = redis_->command({"SISMEMBER", queued_key(o_.scope), id});
    if (!known) return known.error();
    if (known->integer == 0 && unknown_said_.insert(id).second)
      say(fmt::format("a result for job '{}', which this run never published, is ignored",
                      id.substr(0, 64)));
  }
  return {};
}

Status BrokerJudge::check_workers(double& none_since) {
  auto ws = live_workers(*redis_);
  if (!ws) return ws.error();
  for (const WorkerInfo& w : *ws)
    if (w.fingerprint == hw_class()) {
      none_since = 0;
      return {};
    }
  if (none_since == 0) {
    none_since = now_s();
    say(fmt::format("no worker of class {} is alive: jobs wait for one (up to {:.0f} s)",
                    hw_class(), o_.wait_for_worker_s));
  }
  if (now_s() - none_since > o_.wait_for_worker_s)
    return Status::error(fmt::format(
        "no worker of class {} ({}) has answered for {:.0f} s: start one with `kforge worker "
        "--broker {}` on such a machine; workers alive:{}",
        hw_class(), machine_.cpu_model, o_.wait_for_worker_s, o_.url.display(), describe(*ws)));
  return {};
}

Status BrokerJudge::submit(const Task&, const std::string& source, const EvalOptions& options) {
  auto id = publish(source, options);
  return id ? Status() : id.error();
}

Expected<RunResult> BrokerJudge::judge(const Task&, const std::string& source,
                                       const EvalOptions& options) {
  auto id = publish(source, options);
  if (!id) return id.error();
  double none_since = 0, checked = 0;
  while (true) {
    auto r = read_result(*id);
    if (!r) return r.error();
    if (*r) return std::move(**r);
    if (interrupted()) return Status::error(kInterrupted);
    if (now_s() - checked > 2) {
      KF_RETURN_IF_ERROR(check_workers(none_since));
      checked = now_s();
    }
    KF_RETURN_IF_ERROR(watch());
  }
}

}  // namespace kf::broker
