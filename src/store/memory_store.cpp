#include "store/memory_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "support/json_text.h"

namespace kf {
namespace {

using json = nlohmann::json;

// What SQLite would give back: the JSON text re-parsed.
json normalized(const json& j) {
  return json::parse(dump_json(j));
}

std::string now_if_empty(const std::string& t) {
  return t.empty() ? utc_timestamp() : t;
}

Status fail(std::string_view op, const std::string& message) {
  return Status::error(fmt::format("memory store: {}: {}", op, message));
}

template <typename Map>
Expected<std::vector<typename Map::mapped_type>> of_run(const Map& m, const std::string& run_id) {
  std::vector<typename Map::mapped_type> out;
  auto it = m.lower_bound({run_id, std::numeric_limits<int>::min()});
  for (; it != m.end() && it->first.first == run_id; ++it) out.push_back(it->second);
  return out;
}

// 1 + the largest seq of the run, or 1 when it has none (SQL: coalesce(max(seq), 0) + 1).
template <typename Map>
int next_seq_of(const Map& m, const std::string& run_id) {
  auto it = m.upper_bound({run_id, std::numeric_limits<int>::max()});
  if (it == m.begin()) return 1;
  --it;
  return it->first.first == run_id ? it->first.second + 1 : 1;
}

}  // namespace

Status MemoryStore::create_run(const RunRecord& run) {
  std::lock_guard lock(mu_);
  if (run.id.empty()) return fail("create_run", "the run needs an id");
  for (const RunRecord& r : runs_)
    if (r.id == run.id) return fail("create_run", fmt::format("run '{}' already exists", run.id));
  RunRecord r = run;
  r.created_at = now_if_empty(run.created_at);
  if (r.updated_at.empty()) r.updated_at = r.created_at;
  r.options = normalized(run.options);
  r.summary = normalized(run.summary);
  runs_.push_back(std::move(r));
  return ok_status();
}

Expected<RunRecord> MemoryStore::get_run(const std::string& id) {
  std::lock_guard lock(mu_);
  for (const RunRecord& r : runs_)
    if (r.id == id) return r;
  return fail("get_run", fmt::format("no run '{}'", id));
}

Expected<std::vector<RunRecord>> MemoryStore::list_runs() {
  std::lock_guard lock(mu_);
  std::vector<RunRecord> out(runs_.rbegin(), runs_.rend());  // later insertion first on ties
  std::stable_sort(out.begin(), out.end(), [](const RunRecord& a, const RunRecord& b) {
    return a.created_at > b.created_at;
  });
  return out;
}

Status MemoryStore::update_run(const std::string& id, const std::string& state,
                               const std::string& best_candidate, const json& summary) {
  std::lock_guard lock(mu_);
  for (RunRecord& r : runs_) {
    if (r.id != id) continue;
    r.state = state;
    r.best_candidate = best_candidate;
    r.summary = normalized(summary);
    r.updated_at = utc_timestamp();
    return ok_status();
  }
  return fail("update_run", fmt::format("no run '{}'", id));
}

Status MemoryStore::put_candidate(const CandidateRecord& candidate) {
  std::lock_guard lock(mu_);
  if (candidate.key.empty()) return fail("put_candidate", "the candidate needs a key");
  if (candidates_.count(candidate.key) != 0) return ok_status();  // the first write wins
  CandidateRecord c = candidate;
  c.knobs = normalized(c.knobs);
  c.provenance = normalized(c.provenance);
  c.created_at = now_if_empty(c.created_at);
  candidates_.emplace(c.key, std::move(c));
  return ok_status();
}

Expected<std::optional<CandidateRecord>> MemoryStore::get_candidate(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = candidates_.find(key);
  if (it == candidates_.end()) return std::optional<CandidateRecord>();
  return std::optional<CandidateRecord>(it->second);
}

Expected<std::optional<EvaluationRecord>> MemoryStore::find_evaluation(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = evaluations_.find(key);
  if (it == evaluations_.end()) return std::optional<EvaluationRecord>();
  return std::optional<EvaluationRecord>(it->second);
}

Status MemoryStore::check_attempt(std::string_view op, const AttemptRecord& a,
                                  bool evaluation_pending) const {
  bool run =
      std::any_of(runs_.begin(), runs_.end(), [&](const RunRecord& r) { return r.id == a.run_id; });
  if (!run) return fail(op, fmt::format("no run '{}'", a.run_id));
  if (!a.candidate_key.empty() && candidates_.count(a.candidate_key) == 0)
    return fail(op, fmt::format("no candidate '{}'", a.candidate_key));
  if (!a.evaluation_key.empty() && !evaluation_pending && evaluations_.count(a.evaluation_key) == 0)
    return fail(op, fmt::format("no evaluation '{}'", a.evaluation_key));
  if (attempts_.count({a.run_id, a.seq}) != 0)
    return fail(op, fmt::format("attempt (run '{}', seq {}) already exists", a.run_id, a.seq));
  return ok_status();
}

void MemoryStore::insert_attempt(AttemptRecord a) {
  a.detail = normalized(a.detail);
  a.created_at = now_if_empty(a.created_at);
  RunSeq at{a.run_id, a.seq};
  attempts_.emplace(std::move(at), std::move(a));
}

Status MemoryStore::record_evaluation(const EvaluationRecord& e, const AttemptRecord& attempt) {
  std::lock_guard lock(mu_);
  constexpr std::string_view op = "record_evaluation";
  AttemptRecord a = attempt;
  if (a.evaluation_key.empty()) a.evaluation_key = e.key;
  if (a.candidate_key.empty()) a.candidate_key = e.candidate_key;
  if (e.key.empty() || e.candidate_key.empty())
    return fail(op, "the evaluation needs a key and a candidate_key");
  if (a.evaluation_key != e.key)
    return fail(op, fmt::format("the attempt's evaluation_key '{}' is not the evaluation's '{}'",
                                a.evaluation_key, e.key));
  if (a.candidate_key != e.candidate_key)
    return fail(op, fmt::format("the attempt's candidate_key '{}' is not the evaluation's '{}'",
                                a.candidate_key, e.candidate_key));
  KF_RETURN_IF_ERROR(check_attempt(op, a, /*evaluation_pending=*/true));
  if (evaluations_.count(e.key) == 0) {  // the first measurement wins
    EvaluationRecord stored = e;
    stored.result = normalized(e.result);
    stored.created_at = now_if_empty(e.created_at);
    evaluations_.emplace(e.key, std::move(stored));
  }
  insert_attempt(std::move(a));
  return ok_status();
}

Expected<int64_t> MemoryStore::count_evaluations() {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(evaluations_.size());
}

Status MemoryStore::put_attempt(const AttemptRecord& a) {
  std::lock_guard lock(mu_);
  KF_RETURN_IF_ERROR(check_attempt("put_attempt", a, /*evaluation_pending=*/false));
  insert_attempt(a);
  return ok_status();
}

Expected<std::vector<AttemptRecord>> MemoryStore::attempts(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return of_run(attempts_, run_id);
}

Expected<int> MemoryStore::next_attempt_seq(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return next_seq_of(attempts_, run_id);
}

Status MemoryStore::put_message(const MessageRecord& message) {
  std::lock_guard lock(mu_);
  constexpr std::string_view op = "put_message";
  bool run = std::any_of(runs_.begin(), runs_.end(),
                         [&](const RunRecord& r) { return r.id == message.run_id; });
  if (!run) return fail(op, fmt::format("no run '{}'", message.run_id));
  if (messages_.count({message.run_id, message.seq}) != 0)
    return fail(
        op, fmt::format("message (run '{}', seq {}) already exists", message.run_id, message.seq));
  MessageRecord m = message;
  m.body = normalized(m.body);
  m.created_at = now_if_empty(m.created_at);
  RunSeq at{m.run_id, m.seq};
  messages_.emplace(std::move(at), std::move(m));
  return ok_status();
}

Expected<std::vector<MessageRecord>> MemoryStore::messages(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return of_run(messages_, run_id);
}

Expected<int> MemoryStore::next_message_seq(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return next_seq_of(messages_, run_id);
}

Status MemoryStore::put_llm_exchange(const LlmExchangeRecord& e) {
  std::lock_guard lock(mu_);
  constexpr std::string_view op = "put_llm_exchange";
  bool run =
      std::any_of(runs_.begin(), runs_.end(), [&](const RunRecord& r) { return r.id == e.run_id; });
  if (!run) return fail(op, fmt::format("no run '{}'", e.run_id));
  if (exchanges_.count({e.run_id, e.seq}) != 0)
    return fail(op, fmt::format("llm exchange (run '{}', seq {}) already exists", e.run_id, e.seq));
  LlmExchangeRecord r = e;
  r.created_at = now_if_empty(r.created_at);
  RunSeq at{r.run_id, r.seq};
  exchanges_.emplace(std::move(at), std::move(r));
  return ok_status();
}

Expected<std::vector<LlmExchangeRecord>> MemoryStore::llm_exchanges(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return of_run(exchanges_, run_id);
}

Expected<int> MemoryStore::next_llm_exchange_seq(const std::string& run_id) {
  std::lock_guard lock(mu_);
  return next_seq_of(exchanges_, run_id);
}

}  // namespace kf
