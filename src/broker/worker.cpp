#include "broker/worker.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "agents/judge.h"
#include "broker/protocol.h"
#include "harness/backend.h"
#include "harness/shim.h"
#include "schedule/compiled_task.h"
#include "support/fs.h"
#include "support/interrupt.h"

namespace kf::broker {
namespace {

// Writes the result once, announces it, acknowledges and drops the job: atomically, so a worker
// that dies here leaves either nothing done (the job is judged again) or everything.
constexpr const char* kPostScript = R"(
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', '100000', '*', 'job', ARGV[1])
end
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('EXPIRE', KEYS[2], ARGV[5])
redis.call('XACK', KEYS[3], ARGV[3], ARGV[4])
redis.call('XDEL', KEYS[3], ARGV[4])
return 1)";

// Hands a job back: a fresh entry for another worker, the old one acknowledged and dropped.
constexpr const char* kPutBackScript = R"(
redis.call('XADD', KEYS[1], '*', 'job', ARGV[1])
redis.call('XACK', KEYS[1], ARGV[2], ARGV[3])
redis.call('XDEL', KEYS[1], ARGV[3])
return 1)";

// The machine's timing lock: one judged job at a time on this machine, across processes.
class TimingLock {
 public:
  TimingLock() {
    const auto dir = cache_dir() / "broker";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    fd_ = ::open((dir / "timing.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ >= 0)
      while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
      }
  }
  ~TimingLock() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }
  TimingLock(const TimingLock&) = delete;
  TimingLock& operator=(const TimingLock&) = delete;

 private:
  int fd_ = -1;
};

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

struct Entry {
  std::string id;    // the stream entry's id
  std::string text;  // its 'job' field ("" when it has none)
  int64_t deliveries = 1;
};

std::optional<Entry> entry_of(const Reply& e) {
  if (e.type != Reply::Type::array || e.elements.size() != 2) return std::nullopt;
  Entry out{.id = e.elements[0].str, .text = {}};
  const auto& fields = e.elements[1].elements;
  for (size_t i = 0; i + 1 < fields.size(); i += 2)
    if (fields[i].str == "job") out.text = fields[i + 1].str;
  return out;
}

class Worker {
 public:
  Worker(const WorkerOptions& o, MachineInfo m) : o_(o), machine_(std::move(m)) {}

  Status run();

 private:
  void say(const std::string& line) const {
    if (o_.log) o_.log(line);
  }
  std::string stream() const { return jobs_key(machine_.fingerprint); }
  Expected<Redis> connect() const { return Redis::connect(o_.url, o_.connect_timeout_s); }
  Status register_self(Redis& r) const;
  void heartbeat_loop();
  void job_loop(int slot);
  Expected<std::optional<Entry>> take(Redis& r);
  Expected<std::optional<Entry>> reclaim(Redis& r);
  // Judges one entry and posts its answer. Fails only when Redis does.
  Status handle(Redis& r, const Entry& e);
  Status post(Redis& r, const Entry& e, const std::string& scope, const JobResult& res);
  Expected<const CompiledTask*> task_of(Redis& r, const std::string& hash);

  const WorkerOptions& o_;
  MachineInfo machine_;
  std::atomic<bool> stop_{false};
  std::atomic<int> answered_{0};
  std::mutex mu_;
  std::set<std::string> holding_;  // stream ids being judged, for the heartbeat
  std::map<std::string, std::unique_ptr<CompiledTask>> tasks_;
  std::mutex task_mu_;
};

Status Worker::register_self(Redis& r) const {
  const nlohmann::json info = {{"name", o_.name},
                               {"host", host_name()},
                               {"pid", ::getpid()},
                               {"jobs", o_.jobs},
                               {"fingerprint", machine_.fingerprint},
                               {"machine", machine_.to_json()}};
  const int ttl = std::max(3, static_cast<int>(std::ceil(o_.heartbeat_s * 3)));
  auto s = r.command({"SET", worker_key(o_.name), info.dump(), "EX", std::to_string(ttl)});
  return s ? Status() : s.error();
}

void Worker::heartbeat_loop() {
  std::optional<Redis> r;
  while (!stop_ && !interrupted()) {
    if (!r) {
      auto c = connect();
      if (c) r.emplace(std::move(*c));
    }
    if (r) {
      bool lost = !register_self(*r).ok();
      std::set<std::string> ids;
      {
        std::lock_guard<std::mutex> g(mu_);
        ids = holding_;
      }
      for (const std::string& id : ids)
        lost |= !r->command({"XCLAIM", stream(), kGroup, o_.name, "0", id, "JUSTID"});
      if (lost) r.reset();
    }
    for (double t = 0; t < o_.heartbeat_s && !stop_ && !interrupted(); t += 0.1)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Expected<std::optional<Entry>> Worker::reclaim(Redis& r) {
  const auto idle_ms = std::to_string(static_cast<int64_t>(o_.reclaim_after_s * 1000));
  auto a = r.command({"XAUTOCLAIM", stream(), kGroup, o_.name, idle_ms, "0-0", "COUNT", "1"});
  if (!a) return a.error();
  if (a->elements.size() < 2 || a->elements[1].elements.empty()) return std::optional<Entry>();
  auto e = entry_of(a->elements[1].elements[0]);
  if (!e) return std::optional<Entry>();
  auto p = r.command({"XPENDING", stream(), kGroup, e->id, e->id, "1"});
  if (p && !p->elements.empty() && p->elements[0].elements.size() == 4)
    e->deliveries = p->elements[0].elements[3].integer;
  say(fmt::format("took over job entry {} from a worker that stopped answering (delivery {})",
                  e->id, e->deliveries));
  return std::optional<Entry>(std::move(*e));
}

Expected<std::optional<Entry>> Worker::take(Redis& r) {
  auto claimed = reclaim(r);
  if (!claimed || *claimed) return claimed;
  auto x = r.command({"XREADGROUP", "GROUP", kGroup, o_.name, "COUNT", "1", "BLOCK", "1000",
                      "STREAMS", stream(), ">"},
                     2.0);
  if (!x) return x.error();
  if (x->is_nil() || x->elements.empty() || x->elements[0].elements.size() < 2 ||
      x->elements[0].elements[1].elements.empty())
    return std::optional<Entry>();
  return entry_of(x->elements[0].elements[1].elements[0]);
}

Expected<const CompiledTask*> Worker::task_of(Redis& r, const std::string& hash) {
  std::lock_guard<std::mutex> g(task_mu_);
  if (auto it = tasks_.find(hash); it != tasks_.end()) return it->second.get();
  auto text = r.command({"GET", task_key(hash)});
  if (!text) return text.error();
  if (text->is_nil())
    return Status::error(fmt::format("the job's task {} is not on the broker", hash));
  nlohmann::json j = nlohmann::json::parse(text->str, nullptr, false);
  if (j.is_discarded()) return Status::error(fmt::format("task {}: not JSON", hash));
  auto bundle = bundle_from_json(j);
  if (!bundle) return bundle.error();
  auto dir = unpack_task(*bundle, cache_dir() / "broker" / "tasks" / hash, hash);
  if (!dir) return dir.error();
  auto t = compile_task(*dir);
  if (!t) return t.error().with_context("the job's task");
  auto& slot = tasks_[hash];
  slot = std::make_unique<CompiledTask>(std::move(*t));
  say(fmt::format("task {} ({}) fetched", hash, slot->task.name));
  return slot.get();
}

Status Worker::post(Redis& r, const Entry& e, const std::string& scope, const JobResult& res) {
  auto p = r.command({"EVAL", kPostScript, "3", results_key(scope), done_key(scope), stream(),
                      res.job, res.to_json().dump(), kGroup, e.id, std::to_string(kRunKeysTtlS)});
  if (!p) return p.error();
  ++answered_;
  return {};
}

Status Worker::handle(Redis& r, const Entry& e) {
  nlohmann::json j = nlohmann::json::parse(e.text, nullptr, false);
  auto job = j.is_discarded() ? Expected<Job>(Status::error("job: not JSON")) : Job::from_json(j);
  JobResult res{.job = {}, .worker = o_.name, .fingerprint = machine_.fingerprint};
  if (!job) {
    say(fmt::format("job entry {} cannot be read: {}", e.id, job.error().message()));
    auto d =
        r.command({"XADD", dead_key(machine_.fingerprint), "MAXLEN", "~", "10000", "*", "entry",
                   e.id, "reason", job.error().message(), "job", e.text.substr(0, 65536)});
    if (!d) return d.error();
    // Answered when the coordinator can be told; dropped from the stream either way.
    const bool addressable = j.is_object() && j.contains("id") && j["id"].is_string() &&
                             j.contains("scope") && j["scope"].is_string() &&
                             j["id"].get_ref<const std::string&>().size() <= 64 &&
                             j["scope"].get_ref<const std::string&>().size() <= 128;
    if (addressable) {
      res.job = j["id"].get<std::string>();
      res.error = "the job is malformed: " + job.error().message();
      return post(r, e, j["scope"].get<std::string>(), res);
    }
    auto a = r.command({"XACK", stream(), kGroup, e.id});
    if (!a) return a.error();
    auto x = r.command({"XDEL", stream(), e.id});
    return x ? Status() : x.error();
  }
  res.job = job->id;
  if (job->hw_class != machine_.fingerprint) {
    res.error = fmt::format("the job is for machines of class {}, and worker {} is of class {}",
                            job->hw_class, o_.name, machine_.fingerprint);
    return post(r, e, job->scope, res);
  }
  if (e.deliveries > kMaxDeliveries) {
    res.result.verdict = Verdict::crash;
    res.result.message = fmt::format(
        "the job was given to {} workers and each stopped answering while judging it: recorded "
        "failed",
        e.deliveries - 1);
    say(fmt::format("job {}: {}", job->id, res.result.message));
    return post(r, e, job->scope, res);
  }
  auto task = task_of(r, job->task_hash);
  if (!task) {
    res.error = task.error().message();
    return post(r, e, job->scope, res);
  }
  EvalOptions opts = job->options;
  opts.program = (*task)->program;
  opts.machine = machine_limits(machine_, opts.threads);
  opts.remeasure = remeasure_machine(opts.threads, o_.cxx);
  const Backend* backend = opts.backend != nullptr ? opts.backend : backends().front();
  // The compile overlaps other jobs' timings; the judge then finds the object in the cache.
  (void)backend->compile(job->source, entry_shim((*task)->task, ShimKind::candidate), opts.compile);
  Expected<RunResult> judged = Status::error("not judged");
  {
    TimingLock lock;
    if (interrupted()) return Status::error(kInterrupted);
    say(fmt::format("judging job {} ({}: {}{})", job->id.substr(0, 12), (*task)->task.name,
                    opts.origin.empty() ? "a candidate" : opts.origin,
                    opts.label.empty() ? "" : ", " + opts.label));
    agents::HarnessJudge harness;
    judged = harness.judge((*task)->task, job->source, opts);
  }
  if (interrupted()) return Status::error(kInterrupted);
  if (!judged)
    res.error = judged.error().message();
  else
    res.result = std::move(*judged);
  say(fmt::format("job {}: {}", job->id.substr(0, 12),
                  res.error.empty() ? std::string(verdict_name(res.result.verdict)) : res.error));
  return post(r, e, job->scope, res);
}

void Worker::job_loop(int slot) {
  std::optional<Redis> r;
  while (!stop_ && !interrupted()) {
    if (!r) {
      auto c = connect();
      if (!c) {
        say(fmt::format("slot {}: {}; trying again", slot, c.error().message()));
        std::this_thread::sleep_for(std::chrono::seconds(1));
        continue;
      }
      r.emplace(std::move(*c));
    }
    auto e = take(*r);
    if (!e) {
      // The stream or its group was deleted (a person cleaning Redis): made again, empty.
      const bool no_group = e.error().message().find("NOGROUP") != std::string::npos;
      say(e.error().message() + (no_group ? ": the job stream is made again" : "; trying again"));
      if (no_group)
        (void)r->command({"XGROUP", "CREATE", stream(), kGroup, "0", "MKSTREAM"});
      else
        r.reset();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    if (!*e) continue;
    {
      std::lock_guard<std::mutex> g(mu_);
      holding_.insert((*e)->id);
    }
    Status s = handle(*r, **e);
    {
      std::lock_guard<std::mutex> g(mu_);
      holding_.erase((*e)->id);
    }
    if (!s.ok() && interrupted()) {
      // Put back for another worker: this measurement was cut short.
      auto c = connect();
      if (c)
        (void)c->command({"EVAL", kPutBackScript, "1", stream(), (*e)->text, kGroup, (*e)->id});
      say(fmt::format("stopping: job entry {} put back for another worker", (*e)->id));
      break;
    }
    if (!s.ok()) {
      say(s.message());
      r.reset();
    }
    if (o_.max_jobs > 0 && answered_ >= o_.max_jobs) stop_ = true;
  }
}

Status Worker::run() {
  auto r = connect();
  if (!r) return r.error();
  auto g = r->command({"XGROUP", "CREATE", stream(), kGroup, "0", "MKSTREAM"});
  if (!g && g.error().message().find("BUSYGROUP") == std::string::npos) return g.error();
  KF_RETURN_IF_ERROR(register_self(*r));
  say(fmt::format("worker {} joined {} for machines of class {} ({}, {} cores), {} job{} at once",
                  o_.name, o_.url.display(), machine_.fingerprint, machine_.cpu_model,
                  machine_.cores, o_.jobs, o_.jobs == 1 ? "" : "s"));
  std::thread beat([this] { heartbeat_loop(); });
  std::vector<std::thread> slots;
  for (int i = 0; i < std::max(1, o_.jobs); ++i) slots.emplace_back([this, i] { job_loop(i); });
  for (std::thread& t : slots) t.join();
  stop_ = true;
  beat.join();
  if (auto c = connect(); c) (void)c->command({"DEL", worker_key(o_.name)});
  say(fmt::format("worker {} left after {} result{}", o_.name, answered_.load(),
                  answered_ == 1 ? "" : "s"));
  return {};
}

}  // namespace

std::string default_worker_name() {
  std::string name;
  for (char c : host_name())
    name += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ? c : '_';
  return fmt::format("{}-{}", name.empty() ? "worker" : name, ::getpid());
}

Status run_worker(const WorkerOptions& opts) {
  WorkerOptions o = opts;
  if (o.name.empty()) o.name = default_worker_name();
  auto m = backends().front()->probe({.cxx = o.cxx});
  if (!m) return m.error().with_context("machine probe");
  Worker w(o, std::move(*m));
  return w.run();
}

}  // namespace kf::broker
