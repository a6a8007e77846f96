#include "store/store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <random>

#include "support/fs.h"
#include "support/hash.h"
#include "support/json_text.h"

namespace kf {
namespace {

using json = nlohmann::json;

// JSON has no NaN: a NaN double is written as null and read back as NaN.
json number_or_null(double v) {
  return std::isnan(v) ? json(nullptr) : json(v);
}

// Reads the fields of one record; a missing field keeps its default, a field of the wrong type
// is an error naming the record and the field.
class FieldReader {
 public:
  FieldReader(const json& j, const char* record) : j_(j), record_(record) {
    if (!j.is_object()) fail_ = fmt::format("{}: expected a JSON object", record);
  }

  FieldReader& read(const char* key, std::string& out) {
    return read_if(key, &json::is_string, "a string", [&](const json& v) { out = v; });
  }
  FieldReader& read(const char* key, int& out) {
    return read_if(key, &json::is_number_integer, "an integer",
                   [&](const json& v) { out = v.get<int>(); });
  }
  FieldReader& read(const char* key, int64_t& out) {
    return read_if(key, &json::is_number_integer, "an integer",
                   [&](const json& v) { out = v.get<int64_t>(); });
  }
  FieldReader& read(const char* key, double& out) {
    if (const json* v = find(key); v && v->is_null()) {
      out = std::numeric_limits<double>::quiet_NaN();
      return *this;
    }
    return read_if(key, &json::is_number, "a number", [&](const json& v) { out = v; });
  }
  FieldReader& read(const char* key, json& out) {
    if (const json* v = find(key)) out = *v;
    return *this;
  }

  template <typename T>
  Expected<T> finish(T value) const {
    if (!fail_.empty()) return Status::error(fail_);
    return value;
  }

 private:
  const json* find(const char* key) const {
    if (!fail_.empty()) return nullptr;
    auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  template <typename Assign>
  FieldReader& read_if(const char* key, bool (json::*is)() const noexcept, const char* kind,
                       Assign assign) {
    const json* v = find(key);
    if (v == nullptr) return *this;
    if (!(v->*is)()) {
      fail_ = fmt::format("{}: field '{}' must be {}, got {}", record_, key, kind,
                          v->dump().substr(0, 60));
      return *this;
    }
    assign(*v);
    return *this;
  }

  const json& j_;
  const char* record_;
  std::string fail_;
};

}  // namespace

json RunRecord::to_json() const {
  return json{{"id", id},
              {"task_dir", task_dir},
              {"task_name", task_name},
              {"mode", mode},
              {"brain", brain},
              {"options", options},
              {"state", state},
              {"created_at", created_at},
              {"updated_at", updated_at},
              {"best_candidate", best_candidate},
              {"summary", summary}};
}

Expected<RunRecord> RunRecord::from_json(const json& j) {
  RunRecord r;
  FieldReader f(j, "run record");
  f.read("id", r.id).read("task_dir", r.task_dir).read("task_name", r.task_name);
  f.read("mode", r.mode).read("brain", r.brain).read("options", r.options);
  f.read("state", r.state).read("created_at", r.created_at).read("updated_at", r.updated_at);
  f.read("best_candidate", r.best_candidate).read("summary", r.summary);
  return f.finish(std::move(r));
}

json CandidateRecord::to_json() const {
  return json{{"key", key},     {"source", source},         {"schedule", schedule},
              {"knobs", knobs}, {"provenance", provenance}, {"created_at", created_at}};
}

Expected<CandidateRecord> CandidateRecord::from_json(const json& j) {
  CandidateRecord c;
  FieldReader f(j, "candidate record");
  f.read("key", c.key).read("source", c.source).read("schedule", c.schedule);
  f.read("knobs", c.knobs).read("provenance", c.provenance).read("created_at", c.created_at);
  return f.finish(std::move(c));
}

json EvaluationRecord::to_json() const {
  return json{{"key", key},
              {"candidate_key", candidate_key},
              {"task", task},
              {"machine", machine},
              {"threads", threads},
              {"verdict", verdict},
              {"median_s", number_or_null(median_s)},
              {"min_s", number_or_null(min_s)},
              {"result", result},
              {"created_at", created_at}};
}

Expected<EvaluationRecord> EvaluationRecord::from_json(const json& j) {
  EvaluationRecord e;
  FieldReader f(j, "evaluation record");
  f.read("key", e.key).read("candidate_key", e.candidate_key).read("task", e.task);
  f.read("machine", e.machine).read("threads", e.threads).read("verdict", e.verdict);
  f.read("median_s", e.median_s).read("min_s", e.min_s).read("result", e.result);
  f.read("created_at", e.created_at);
  return f.finish(std::move(e));
}

json AttemptRecord::to_json() const {
  return json{{"run_id", run_id},
              {"seq", seq},
              {"kind", kind},
              {"strategy", strategy},
              {"candidate_key", candidate_key},
              {"evaluation_key", evaluation_key},
              {"verdict", verdict},
              {"median_s", number_or_null(median_s)},
              {"speedup", number_or_null(speedup)},
              {"detail", detail},
              {"created_at", created_at}};
}

Expected<AttemptRecord> AttemptRecord::from_json(const json& j) {
  AttemptRecord a;
  FieldReader f(j, "attempt record");
  f.read("run_id", a.run_id).read("seq", a.seq).read("kind", a.kind);
  f.read("strategy", a.strategy).read("candidate_key", a.candidate_key);
  f.read("evaluation_key", a.evaluation_key).read("verdict", a.verdict);
  f.read("median_s", a.median_s).read("speedup", a.speedup).read("detail", a.detail);
  f.read("created_at", a.created_at);
  return f.finish(std::move(a));
}

json MessageRecord::to_json() const {
  return json{{"run_id", run_id}, {"seq", seq},   {"from_role", from_role},  {"to_role", to_role},
              {"type", type},     {"body", body}, {"created_at", created_at}};
}

Expected<MessageRecord> MessageRecord::from_json(const json& j) {
  MessageRecord m;
  FieldReader f(j, "message record");
  f.read("run_id", m.run_id).read("seq", m.seq).read("from_role", m.from_role);
  f.read("to_role", m.to_role).read("type", m.type).read("body", m.body);
  f.read("created_at", m.created_at);
  return f.finish(std::move(m));
}

json LlmExchangeRecord::to_json() const {
  return json{{"run_id", run_id},
              {"seq", seq},
              {"role", role},
              {"model", model},
              {"request", request},
              {"response", response},
              {"prompt_tokens", prompt_tokens},
              {"completion_tokens", completion_tokens},
              {"latency_s", latency_s},
              {"cost", cost},
              {"attempts", attempts},
              {"error", error},
              {"created_at", created_at}};
}

Expected<LlmExchangeRecord> LlmExchangeRecord::from_json(const json& j) {
  LlmExchangeRecord e;
  FieldReader f(j, "llm exchange record");
  f.read("run_id", e.run_id).read("seq", e.seq).read("role", e.role).read("model", e.model);
  f.read("request", e.request).read("response", e.response);
  f.read("prompt_tokens", e.prompt_tokens).read("completion_tokens", e.completion_tokens);
  f.read("latency_s", e.latency_s).read("cost", e.cost).read("attempts", e.attempts);
  f.read("error", e.error).read("created_at", e.created_at);
  return f.finish(std::move(e));
}

Status Store::put_llm_exchange(const LlmExchangeRecord&) {
  return Status::error("this store does not record LLM exchanges");
}

Expected<std::vector<LlmExchangeRecord>> Store::llm_exchanges(const std::string&) {
  return Status::error("this store does not record LLM exchanges");
}

Expected<int> Store::next_llm_exchange_seq(const std::string&) {
  return Status::error("this store does not record LLM exchanges");
}

std::string evaluation_key(const std::string& candidate_key, const std::string& task_identity,
                           const std::string& machine, int threads) {
  Hasher h;
  h.add("kforge-evaluation-v1").add(candidate_key).add(task_identity).add(machine);
  h.add(std::to_string(threads));
  return h.hex();
}

std::string new_run_id() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  std::random_device rd;
  return fmt::format("r{}-{:04x}", stamp, rd() & 0xffffu);
}

std::string utc_timestamp() {
  using namespace std::chrono;
  auto now = system_clock::now();
  std::time_t secs = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", stamp, static_cast<int>(ms));
}

std::filesystem::path default_store_path() {
  if (const char* p = std::getenv("KFORGE_STORE"); p && *p) return p;
  const std::filesystem::path data = data_dir();
  return data.empty() ? std::filesystem::current_path() / ".kforge" / "runs.db" : data / "runs.db";
}

Expected<RunRecord> find_run(Store& store, const std::string& id) {
  if (id.empty()) return Status::error("no run id given (`kforge runs` lists them)");
  auto runs = store.list_runs();
  if (!runs) return runs.error();
  std::vector<const RunRecord*> matches;
  for (const RunRecord& r : *runs) {
    if (r.id == id) return r;
    if (r.id.starts_with(id)) matches.push_back(&r);
  }
  if (matches.size() == 1) return *matches.front();
  if (matches.empty())
    return Status::error(
        fmt::format("no run '{}' in the store (`kforge runs` lists them)", terminal_text(id)));
  std::vector<std::string> ids;
  for (size_t i = 0; i < matches.size() && i < 4; ++i) ids.push_back(matches[i]->id);
  return Status::error(fmt::format("run id prefix '{}' matches {} runs ({}{}): give more of the id",
                                   terminal_text(id), matches.size(), fmt::join(ids, ", "),
                                   matches.size() > ids.size() ? ", ..." : ""));
}

}  // namespace kf
