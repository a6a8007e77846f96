#include "agents/llm/session.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <system_error>

#include "support/text_scan.h"

namespace kf::agents::llm_brain {

using llm::LlmRole;

Session::Session(SessionOptions o)
    : options_(std::move(o)), meter_(options_.config.prices, options_.budget) {
  if (!options_.make_client)
    options_.make_client = [](const llm::LlmSettings& s) {
      return std::make_unique<llm::ChatClient>(s);
    };
}

llm::ChatClient& Session::client(LlmRole role) {
  auto& c = clients_[role];
  if (!c) c = options_.make_client(options_.config.settings_for(role));
  return *c;
}

Status Session::probe() {
  if (probed_) return *probed_;
  std::set<std::pair<std::string, std::string>> done;
  probed_ = ok_status();
  for (LlmRole role : {LlmRole::planner, LlmRole::implementer, LlmRole::debugger}) {
    const llm::LlmSettings s = options_.config.settings_for(role);
    Status st = s.validate();
    if (st.ok() && options_.budget.max_cost) st = meter_.can_price(s.model);
    if (st.ok() && done.insert({s.base_url, s.model}).second) {
      auto p = client(role).probe();
      if (!p) st = p.error();
      if (p && p->context_tokens) probed_context_[role] = *p->context_tokens;
    }
    if (!st.ok()) {
      probed_ = st.with_context(fmt::format("the LLM {}", llm::role_name(role)));
      break;
    }
  }
  return *probed_;
}

void Session::begin_run(std::vector<ExchangeRecord> recorded, RecordFn record) {
  replay_.clear();
  for (ExchangeRecord& e : recorded)
    if (!e.unanswered()) replay_.push_back(std::move(e));
  record_ = std::move(record);
  for (const ExchangeRecord& e : replay_)
    meter_.add(e.role, e.model, e.prompt_tokens, e.completion_tokens);
}

size_t Session::prompt_chars(LlmRole role) const {
  int64_t tokens = options_.config.settings_for(role).context_tokens;
  if (auto it = probed_context_.find(role); it != probed_context_.end()) tokens = it->second;
  if (tokens <= 0) tokens = options_.default_context_tokens;
  return static_cast<size_t>(tokens) * 3;  // 4 chars per token, a quarter kept for the reply
}

Status Session::record(ExchangeRecord e) {
  exchanges_.push_back(e);
  if (!record_) return ok_status();
  return record_(e);
}

namespace {

// A recorded answer again: the content of a stored chat.completion body.
Expected<Session::Answer> answer_from(const ExchangeRecord& e) {
  if (!e.error.empty()) return Status::error(e.error + " (as recorded)");
  auto j = nlohmann::json::parse(e.response, nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* content = nullptr;
  std::string finish;
  if (j.is_object() && j.contains("choices") && j["choices"].is_array() && !j["choices"].empty() &&
      j["choices"][0].is_object()) {
    const nlohmann::json& c = j["choices"][0];
    if (c.contains("message") && c["message"].is_object() && c["message"].contains("content"))
      content = &c["message"]["content"];
    if (c.contains("finish_reason") && c["finish_reason"].is_string()) finish = c["finish_reason"];
  }
  if (!content || !content->is_string())
    return Status::error("a recorded exchange's response holds no content");
  return Session::Answer{content->get<std::string>(), finish == "length", true};
}

}  // namespace

Expected<Session::Answer> Session::ask(LlmRole role, const std::vector<llm::ChatMessage>& msgs) {
  const std::string name = llm::role_name(role);
  if (!replay_.empty() && replay_.front().role == name) {
    ExchangeRecord e = std::move(replay_.front());
    replay_.pop_front();
    ++replayed_;
    exchanges_.push_back(e);
    return answer_from(e);
  }
  replay_.clear();  // the run went another way than the record: the model answers from here
  if (!halted_.empty()) return Status::error(halted_);
  if (Status b = meter_.check_budget(); !b.ok()) {
    halted_ = b.message();
    return b;
  }
  llm::ChatClient& c = client(role);
  llm::ChatRequest req{.messages = msgs, .role_tag = name};
  auto reply = c.complete(req);
  ExchangeRecord e{.role = name, .model = c.settings().model};
  if (!reply) {
    e.request = llm::chat_request_body(req, c.settings().model);
    e.response = c.last_failed_body();
    e.error = reply.error().message();
    if (c.last_failure() != llm::ChatClient::Failure::bad_reply)
      halted_ = fmt::format("the LLM {} got no answer: {}", name, e.error);
    KF_RETURN_IF_ERROR(record(e));
    return reply.error();
  }
  if (!reply->model.empty()) e.model = reply->model;
  const llm::CallUsage u =
      meter_.add(name, e.model, reply->prompt_tokens, reply->completion_tokens);
  e.request = reply->request_body;
  e.response = reply->response_body;
  e.prompt_tokens = reply->prompt_tokens;
  e.completion_tokens = reply->completion_tokens;
  e.latency_s = reply->elapsed_s;
  e.cost = u.cost;
  e.attempts = reply->attempts;
  KF_RETURN_IF_ERROR(record(e));
  return Answer{reply->content, reply->truncated, false};
}

void Session::note_candidate(const std::string& role, const std::string& plan) {
  pending_ = AttemptNote{.role = role, .plan = excerpt(plan, 200)};
}

void Session::note_outcome(const std::string& verdict, const std::string& message, double speedup) {
  AttemptNote n = pending_.value_or(AttemptNote{.role = "?", .plan = "?"});
  pending_.reset();
  n.verdict = verdict;
  n.message = excerpt(message, 300);
  n.speedup = speedup;
  history_.push_back(std::move(n));
}

std::vector<std::string> Session::history_lines() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < history_.size(); ++i) {
    const AttemptNote& n = history_[i];
    out.push_back(
        fmt::format("{}. [{}] plan \"{}\": {}{}{}", i + 1, n.role, n.plan, n.verdict,
                    n.speedup > 0 ? fmt::format(" ({:.2f}x the best then)", n.speedup) : "",
                    n.message.empty() ? "" : " - " + n.message));
  }
  return out;
}

std::optional<std::string> Session::written_before(const std::string& normalized) const {
  auto it = written_.find(normalized);
  if (it == written_.end()) return std::nullopt;
  return it->second;
}

void Session::remember_written(const std::string& normalized, const std::string& source) {
  written_.emplace(normalized, source);
}

namespace {
std::shared_ptr<Session>& process_slot() {
  static std::shared_ptr<Session> s;
  return s;
}
}  // namespace

std::shared_ptr<Session> process_session() {
  return process_slot();
}

void set_process_session(std::shared_ptr<Session> s) {
  process_slot() = std::move(s);
}

Expected<std::shared_ptr<Session>> session_for(const std::shared_ptr<Session>& given) {
  if (given) return given;
  if (auto s = process_session()) return s;
  std::error_code ec;
  auto config = std::filesystem::is_regular_file("kforge.toml", ec)
                    ? llm::read_llm_config("kforge.toml")
                    : llm::llm_config_from_env();
  if (!config) return config.error();
  auto s = std::make_shared<Session>(SessionOptions{.config = *config});
  set_process_session(s);
  return s;
}

}  // namespace kf::agents::llm_brain
