#include "broker/protocol.h"

#include <fmt/format.h>

#include "harness/backend.h"
#include "support/fs.h"
#include "support/hash.h"

namespace kf::broker {
namespace {

// A field reader over untrusted JSON: records the first problem, never throws.
class Reader {
 public:
  Reader(const nlohmann::json& j, std::string what) : j_(j), what_(std::move(what)) {}
  const std::string& error() const { return error_; }

  std::string str(const char* key, size_t max_bytes, bool required = true) {
    const auto it = j_.find(key);
    if (it == j_.end()) {
      if (required) fail(fmt::format("missing field '{}'", key));
      return {};
    }
    if (!it->is_string()) return fail(fmt::format("'{}' is not a string", key)), std::string();
    const auto& s = it->get_ref<const std::string&>();
    if (s.size() > max_bytes)
      return fail(fmt::format("'{}' is longer than {} bytes", key, max_bytes)), std::string();
    return s;
  }
  double num(const char* key, double lo, double hi, double fallback) {
    const auto it = j_.find(key);
    if (it == j_.end()) return fallback;
    if (!it->is_number()) return fail(fmt::format("'{}' is not a number", key)), fallback;
    const double v = it->get<double>();
    if (!(v >= lo && v <= hi))
      return fail(fmt::format("'{}' = {} is outside [{}, {}]", key, v, lo, hi)), fallback;
    return v;
  }
  int integer(const char* key, int lo, int hi, int fallback) {
    return static_cast<int>(num(key, lo, hi, fallback));
  }
  bool flag(const char* key, bool fallback) {
    const auto it = j_.find(key);
    if (it == j_.end()) return fallback;
    if (!it->is_boolean()) return fail(fmt::format("'{}' is not true or false", key)), fallback;
    return it->get<bool>();
  }
  void fail(std::string why) {
    if (error_.empty()) error_ = what_ + ": " + why;
  }

 private:
  const nlohmann::json& j_;
  std::string what_, error_;
};

bool hex_id(const std::string& s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// A run id or a worker name: letters, digits, '-', '_', '.', ':'.
bool plain_name(const std::string& s) {
  if (s.empty() || s.size() > 128) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
          c == ':'))
      return false;
  return true;
}

}  // namespace

std::string jobs_key(const std::string& c) {
  return "kforge:jobs:" + c;
}
std::string dead_key(const std::string& c) {
  return "kforge:dead:" + c;
}
std::string task_key(const std::string& h) {
  return "kforge:task:" + h;
}
std::string worker_key(const std::string& n) {
  return "kforge:worker:" + n;
}
std::string queued_key(const std::string& s) {
  return "kforge:queued:" + s;
}
std::string results_key(const std::string& s) {
  return "kforge:results:" + s;
}
std::string done_key(const std::string& s) {
  return "kforge:done:" + s;
}

nlohmann::json eval_options_to_json(const EvalOptions& o) {
  const CompileOptions& c = o.compile;
  return {{"threads", o.threads},
          {"seeds_per_shape", o.seeds_per_shape},
          {"seed", std::to_string(o.seed)},
          {"time", o.time},
          {"time_reference", o.time_reference},
          {"time_baseline", o.time_baseline},
          {"min_time_s", o.min_time_s},
          {"min_samples", o.min_samples},
          {"max_samples", o.max_samples},
          {"max_timing_wall_s", o.max_timing_wall_s},
          {"stop_slower_than_s", o.stop_slower_than_s},
          {"rival_source", o.rival_source},
          {"rival_name", o.rival_name},
          {"run_timeout_s", o.run_timeout_s},
          {"oracle_timeout_s", o.oracle_timeout_s},
          {"bench_oracle_budget_s", o.bench_oracle_budget_s},
          {"memory_limit", o.memory_limit},
          {"cpu_limit_s", o.cpu_limit_s},
          {"suspicious_fraction", o.suspicious_fraction},
          {"backend", o.backend != nullptr ? std::string(o.backend->name) : "cpu"},
          {"label", o.label},
          {"compile",
           {{"cxx", c.cxx},
            {"extra_flags", c.extra_flags},
            {"timeout_s", c.timeout_s},
            {"memory_limit", c.memory_limit},
            {"max_file_bytes", c.max_file_bytes},
            {"max_object_bytes", c.max_object_bytes},
            {"use_cache", c.use_cache}}}};
}

Expected<EvalOptions> eval_options_from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Status::error("job options: not an object");
  EvalOptions o;
  Reader r(j, "job options");
  constexpr double kHour = 3600, kTiB = 1099511627776.0;
  o.threads = r.integer("threads", 1, 256, 1);
  o.seeds_per_shape = r.integer("seeds_per_shape", 2, 64, o.seeds_per_shape);
  const std::string seed = r.str("seed", 20, false);
  if (!seed.empty()) {
    try {
      size_t used = 0;
      o.seed = std::stoull(seed, &used);
      if (used != seed.size()) r.fail("'seed' is not a number");
    } catch (const std::exception&) {
      r.fail("'seed' is not a number");
    }
  }
  o.time = r.flag("time", o.time);
  o.time_reference = r.flag("time_reference", o.time_reference);
  o.time_baseline = r.flag("time_baseline", o.time_baseline);
  o.min_time_s = r.num("min_time_s", 0, 60, o.min_time_s);
  o.min_samples = r.integer("min_samples", 1, 10000, o.min_samples);
  o.max_samples = r.integer("max_samples", 1, 100000, o.max_samples);
  o.max_timing_wall_s = r.num("max_timing_wall_s", 0, kHour, o.max_timing_wall_s);
  o.stop_slower_than_s = r.num("stop_slower_than_s", 0, kHour, o.stop_slower_than_s);
  o.rival_source = r.str("rival_source", kMaxSourceBytes, false);
  o.rival_name = r.str("rival_name", 64, false);
  if (o.rival_name.empty()) o.rival_name = "rival";
  o.run_timeout_s = r.num("run_timeout_s", 0.1, kHour, o.run_timeout_s);
  o.oracle_timeout_s = r.num("oracle_timeout_s", 0.1, kHour, o.oracle_timeout_s);
  o.bench_oracle_budget_s = r.num("bench_oracle_budget_s", 0, kHour, o.bench_oracle_budget_s);
  o.memory_limit = static_cast<size_t>(r.num("memory_limit", 0, kTiB, 0));
  o.cpu_limit_s = r.num("cpu_limit_s", 1, kHour, o.cpu_limit_s);
  o.suspicious_fraction = r.num("suspicious_fraction", 0, 1, o.suspicious_fraction);
  o.label = r.str("label", 256, false);
  const std::string backend = r.str("backend", 32, false);
  if (!backend.empty()) {
    auto b = backend_named(backend);
    if (!b)
      r.fail(b.error().message());
    else
      o.backend = *b;
  }
  const auto c = j.find("compile");
  if (c != j.end()) {
    if (!c->is_object()) return Status::error("job options: 'compile' is not an object");
    Reader rc(*c, "job options: compile");
    o.compile.cxx = rc.str("cxx", 16, false);
    if (o.compile.cxx.empty()) o.compile.cxx = "g++";
    if (o.compile.cxx != "g++" && o.compile.cxx != "clang++")
      rc.fail(fmt::format("compiler '{}' is not g++ or clang++", o.compile.cxx));
    o.compile.timeout_s = rc.num("timeout_s", 1, kHour, o.compile.timeout_s);
    o.compile.memory_limit = static_cast<size_t>(
        rc.num("memory_limit", 1 << 20, kTiB, static_cast<double>(o.compile.memory_limit)));
    o.compile.max_file_bytes = static_cast<size_t>(
        rc.num("max_file_bytes", 1 << 10, kTiB, static_cast<double>(o.compile.max_file_bytes)));
    o.compile.max_object_bytes = static_cast<size_t>(
        rc.num("max_object_bytes", 1 << 10, kTiB, static_cast<double>(o.compile.max_object_bytes)));
    o.compile.use_cache = rc.flag("use_cache", true);
    if (const auto f = c->find("extra_flags"); f != c->end()) {
      if (!f->is_array() || f->size() > 64)
        rc.fail("'extra_flags' is not a list of 64 at most");
      else
        for (const auto& x : *f) {
          if (!x.is_string() || x.get_ref<const std::string&>().size() > 128) {
            rc.fail("'extra_flags' holds something other than a short string");
            break;
          }
          o.compile.extra_flags.push_back(x.get<std::string>());
        }
    }
    if (c->contains("libs")) rc.fail("a job cannot link libraries");
    if (!rc.error().empty()) return Status::error(rc.error());
  }
  if (!r.error().empty()) return Status::error(r.error());
  return o;
}

std::string Job::make_id(const std::string& scope, const std::string& hw_class,
                         const std::string& task_hash, const std::string& source,
                         const nlohmann::json& options) {
  const nlohmann::json j = {{"scope", scope},
                            {"class", hw_class},
                            {"task", task_hash},
                            {"source", source},
                            {"options", options}};
  return content_hash(j.dump());
}

nlohmann::json Job::to_json() const {
  return {{"v", 1},
          {"id", id},
          {"scope", scope},
          {"class", hw_class},
          {"task", task_hash},
          {"source", source},
          {"origin", options.origin},
          {"options", eval_options_to_json(options)}};
}

Expected<Job> Job::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Status::error("job: not a JSON object");
  Reader r(j, "job");
  if (r.integer("v", 1, 1, 0) != 1) r.fail("'v' is not 1 (a job from another kforge version)");
  Job job;
  job.id = r.str("id", 64);
  job.scope = r.str("scope", 128);
  job.hw_class = r.str("class", 64);
  job.task_hash = r.str("task", 64);
  job.source = r.str("source", kMaxSourceBytes);
  const std::string origin = r.str("origin", 256, false);
  if (!r.error().empty()) return Status::error(r.error());
  if (!hex_id(job.id, 64)) return Status::error("job: 'id' is not hex digits");
  if (!hex_id(job.task_hash, 64)) return Status::error("job: 'task' is not hex digits");
  if (!plain_name(job.scope) || !plain_name(job.hw_class))
    return Status::error("job: 'scope' or 'class' holds characters other than [A-Za-z0-9._:-]");
  const auto o = j.find("options");
  if (o == j.end()) return Status::error("job: missing field 'options'");
  auto opts = eval_options_from_json(*o);
  if (!opts) return opts.error();
  job.options = std::move(*opts);
  job.options.origin = origin;
  return job;
}

nlohmann::json JobResult::to_json() const {
  nlohmann::json j = {{"job", job}, {"worker", worker}, {"fingerprint", fingerprint}};
  if (!error.empty())
    j["error"] = error;
  else
    j["result"] = result.to_json();
  return j;
}

Expected<JobResult> JobResult::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Status::error("result: not a JSON object");
  Reader r(j, "result");
  JobResult out;
  out.job = r.str("job", 64);
  out.worker = r.str("worker", 128);
  out.fingerprint = r.str("fingerprint", 64);
  out.error = r.str("error", 1 << 16, false);
  if (!r.error().empty()) return Status::error(r.error());
  if (!out.error.empty()) return out;
  const auto res = j.find("result");
  if (res == j.end()) return Status::error("result: neither 'result' nor 'error'");
  auto rr = RunResult::from_json(*res);
  if (!rr) return rr.error().with_context("result");
  out.result = std::move(*rr);
  return out;
}

Expected<TaskBundle> bundle_task(const std::filesystem::path& dir, const TaskIdentity& identity) {
  TaskBundle b;
  for (const std::string& f : identity.files) {
    auto text = read_file(dir / f);
    if (!text) return text.error();
    b[f] = std::move(*text);
  }
  return b;
}

nlohmann::json bundle_to_json(const TaskBundle& b) {
  nlohmann::json files = nlohmann::json::object();
  for (const auto& [name, text] : b) files[name] = text;
  return {{"files", files}};
}

Expected<TaskBundle> bundle_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("files") || !j["files"].is_object())
    return Status::error("task bundle: no 'files' object");
  const auto& files = j["files"];
  if (files.size() > kMaxTaskFiles)
    return Status::error(fmt::format("task bundle: more than {} files", kMaxTaskFiles));
  TaskBundle b;
  for (const auto& [name, text] : files.items()) {
    const std::filesystem::path p(name);
    bool escapes = name.empty() || name.size() > 255 || p.is_absolute();
    for (const auto& part : p)
      if (part == ".." || part == ".") escapes = true;
    if (escapes)
      return Status::error(
          fmt::format("task bundle: file name '{}' leaves the folder", name.substr(0, 64)));
    if (!text.is_string() || text.get_ref<const std::string&>().size() > kMaxTaskFileBytes)
      return Status::error(
          fmt::format("task bundle: '{}' is not text under {} bytes", name, kMaxTaskFileBytes));
    b[name] = text.get<std::string>();
  }
  return b;
}

Expected<std::filesystem::path> unpack_task(const TaskBundle& b, const std::filesystem::path& dir,
                                            const std::string& hash) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::error(fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  for (const auto& [name, text] : b) {
    const auto path = dir / name;
    std::filesystem::create_directories(path.parent_path(), ec);
    KF_RETURN_IF_ERROR(write_file_atomic(path, text));
  }
  auto t = load_identified_task(dir);
  if (!t) return t.error().with_context("the task of the job");
  if (t->identity.hash != hash)
    return Status::error(
        fmt::format("the task sent as {} has the identity {}: its files do not match its hash",
                    hash, t->identity.hash));
  return dir;
}

}  // namespace kf::broker
