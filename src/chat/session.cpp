#include "chat/session.h"

#include <fmt/format.h>

#include <algorithm>

#include "agents/strategy.h"
#include "modes/eval_settings.h"
#include "modes/optimize_report.h"
#include "modes/optimize_resume.h"
#include "support/fs.h"
#include "support/text_scan.h"

namespace kf::chat {

using search::Move;
using search::Node;
using search::Proposal;

nlohmann::json ChatOptions::to_json() const {
  return {{"task_dir", task_dir.string()},
          {"brain", brain},
          {"sources", sources.string()},
          {"threads", threads},
          {"backend", backend},
          {"target", target},
          {"cxx", cxx},
          {"seed", seed},
          {"min_time_s", min_time_s},
          {"final_min_time_s", final_min_time_s},
          {"from", from.to_json()},
          {"strategies", strategies.to_json()},
          {"pins", pins.to_json()},
          {"llm", llm_args.to_json()}};
}

Expected<ChatOptions> ChatOptions::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Status::error("the chat run's options are not an object");
  try {
    ChatOptions o;
    o.task_dir = j.value("task_dir", std::string());
    o.brain = j.value("brain", o.brain);
    o.sources = j.value("sources", std::string());
    o.threads = j.value("threads", 1);
    o.backend = j.value("backend", o.backend);
    o.target = j.value("target", std::string());
    o.cxx = j.value("cxx", o.cxx);
    o.seed = j.value("seed", uint64_t{1});
    o.min_time_s = j.value("min_time_s", o.min_time_s);
    o.final_min_time_s = j.value("final_min_time_s", o.final_min_time_s);
    o.from = StartingPoint::from_json(j.value("from", nlohmann::json()));
    o.strategies = agents::StrategyFilter::from_json(j.value("strategies", nlohmann::json()));
    o.pins = agents::KnobPins::from_json(j.value("pins", nlohmann::json()));
    if (j.contains("llm")) o.llm_args = OptimizeOptions::LlmArgs::from_json(j["llm"]);
    return o;
  } catch (const nlohmann::json::exception& e) {
    return Status::error(std::string("the chat run's options: ") + e.what());
  }
}

Session::Session(ChatOptions o, Store& store, std::string run_id, bool continuing)
    : o_(std::move(o)),
      store_(store),
      run_id_(std::move(run_id)),
      continuing_(continuing),
      console_(o_.progress ? o_.progress : [](const std::string&) {}) {
  events_.add(&console_);
  events_.add(o_.events);
}

Session::~Session() = default;

Expected<std::unique_ptr<Session>> Session::open(const ChatOptions& o, Store& store) {
  ChatOptions opts = o;
  std::string id = new_run_id();
  const bool continuing = !o.run.empty();
  if (continuing) {
    auto run = store.get_run(o.run);
    if (!run) return run.error();
    if (run->mode != "chat")
      return Status::error(fmt::format(
          "run {} was made by `kforge {}`: `kforge chat --run` continues chat runs (start one "
          "from its best kernel with `kforge chat TASK --from best.cpp`)",
          o.run, run->mode));
    auto stored = ChatOptions::from_json(run->options);
    if (!stored) return stored.error();
    stored->progress = o.progress;
    stored->events = o.events;
    stored->llm = o.llm;
    stored->llm_args = o.llm_args.over(stored->llm_args);
    stored->editor = o.editor;
    stored->editor_stdin = o.editor_stdin;
    stored->out_dir = o.out_dir;
    opts = *stored;
    id = run->id;
  }
  // A task folder as an absolute path: a later session (a browser's server) may start elsewhere.
  if (!continuing && !opts.task_dir.empty())
    opts.task_dir = std::filesystem::absolute(opts.task_dir);
  std::unique_ptr<Session> s(new Session(opts, store, id, continuing));
  KF_RETURN_IF_ERROR(s->setup());
  KF_RETURN_IF_ERROR(continuing ? s->rebuild() : s->start_new());
  return s;
}

Status Session::setup() {
  if (o_.out_dir.empty()) o_.out_dir = default_output_dir(run_id_);
  auto env = RunEnv::make(RunEnv::options_of(o_, run_id_));
  if (!env) return env.error();
  env_ = std::move(*env);
  space_ = std::make_unique<search::SearchSpace>(*env_, o_.threads);
  log_ = std::make_unique<RunLog>(env_->log_config(store_, run_id_, 0, &events_));
  started_ = now_epoch_s();
  return env_->start_run(store_, events_, run_id_,
                         {.mode = "chat",
                          .options = o_.to_json(),
                          .threads = o_.threads,
                          .resumed = continuing_,
                          .started_epoch_s = started_});
}

Status Session::start_new() {
  auto first = o_.from.empty() ? env_->brain.implementer->first(env_->work(nullptr, o_.threads))
                               : starting_candidate(o_.from, env_->work(nullptr, o_.threads));
  if (!first) return first.error().with_context("the first candidate");
  Proposal p{.parent = "", .move = {.kind = "root", .text = candidate_label(*first)}};
  p.move.proposer = o_.from.empty() ? env_->brain.roles.at("implementer") : "human";
  p.child = *first;
  p.predicted_s = space_->predict(p.child);
  auto n = judge(std::move(p));
  if (!n) return n.error();
  if (!(*n)->ok())
    return Status::error(fmt::format("the first candidate ({}) was judged {}: {}",
                                     candidate_label(*first), verdict_name((*n)->verdict),
                                     (*n)->message));
  root_ = current_ = (*n)->key();
  log_->set_reference_median((*n)->median_s);
  return {};
}

namespace {

// A stored candidate as the message the roles work with.
agents::CandidateMsg candidate_of(const CandidateRecord& c, int threads) {
  agents::CandidateMsg m;
  m.key = c.key;
  m.source = c.source;
  const nlohmann::json& p = c.provenance;
  m.kind = agents::parse_source_kind(p.is_object() ? p.value("kind", std::string()) : "")
               .value_or(agents::SourceKind::written);
  m.origin = p.is_object() ? p.value("origin", std::string()) : "";
  m.parent = p.is_object() ? p.value("parent", std::string()) : "";
  m.threads = threads;
  if (!c.schedule.empty()) {
    agents::Generation g{.schedule = c.schedule};
    if (auto r = agents::Recipe::from_json(c.knobs)) g.recipe = *r;
    m.generated = std::move(g);
  }
  return m;
}

}  // namespace

Status Session::sync() {
  auto next = store_.next_attempt_seq(run_id_);
  if (!next) return next.error();
  if (*next - 1 == log_->attempts()) return {};
  const std::string current = current_;
  graph_ = search::SearchGraph();
  results_.clear();
  details_.clear();
  proposals_.clear();
  root_.clear();
  KF_RETURN_IF_ERROR(rebuild());
  if (graph_.find(current)) current_ = current;
  return {};
}

Status Session::rebuild() {
  log_ = std::make_unique<RunLog>(env_->log_config(store_, run_id_, 0, &events_));
  auto attempts = store_.attempts(run_id_);
  if (!attempts) return attempts.error();
  for (const AttemptRecord& a : *attempts) {
    if (a.kind != "chat" || !a.detail.is_object() || !a.detail.contains("move")) continue;
    const nlohmann::json& m = a.detail["move"];
    Move move{.kind = m.value("kind", std::string()),
              .text = m.value("text", std::string()),
              .proposer = m.value("proposer", std::string())};
    const std::string parent = a.detail.value("parent", std::string());
    if (a.verdict == "duplicate") {
      graph_.add_edge(parent, a.detail.value("same_as", std::string()), move);
      continue;
    }
    if (a.candidate_key.empty() || a.evaluation_key.empty() || graph_.find(a.candidate_key))
      continue;
    auto c = store_.get_candidate(a.candidate_key);
    if (!c) return c.error();
    auto e = store_.find_evaluation(a.evaluation_key);
    if (!e) return e.error();
    if (!c->has_value() || !e->has_value())
      return Status::error(
          fmt::format("run {}: attempt {} names a candidate or an evaluation "
                      "missing from the store",
                      run_id_, a.seq));
    auto r = RunResult::from_json((*e)->result);
    if (!r) return r.error().with_context("evaluation " + a.evaluation_key);
    Proposal p{.parent = parent,
               .move = move,
               .child = candidate_of(**c, (*e)->threads),
               .predicted_s = a.detail.value("predicted_s", 0.0)};
    Node& n = search::add_judged(graph_, p, *r, static_cast<int>(graph_.size()) + 1);
    results_[n.key()] = *r;
    details_[n.key()] = a.detail;
    if (root_.empty()) root_ = n.key();
  }
  if (root_.empty()) return Status::error("run " + run_id_ + " has no judged node to continue");
  const Node* best = graph_.best();
  current_ = best ? best->key() : root_;
  if (best && graph_.find(root_)->ok()) log_->set_reference_median(graph_.find(root_)->median_s);
  auto next_attempt = store_.next_attempt_seq(run_id_);
  if (!next_attempt) return next_attempt.error();
  auto next_message = store_.next_message_seq(run_id_);
  if (!next_message) return next_message.error();
  return log_->resume_at(*next_attempt - 1, *next_message - 1, *next_attempt - 1,
                         *next_message - 1);
}

EvalOptions Session::eval_options(int threads, const std::string& kind) const {
  const Node* best = graph_.best();
  const RunResult* best_result = best ? &results_.at(best->key()) : nullptr;
  return eval_options_for(env_->eval_settings(o_.seed, o_.min_time_s, o_.final_min_time_s),
                          env_->compiled, threads, kind, best_result, nullptr);
}

Expected<Node*> Session::judge(Proposal p, const nlohmann::json& extra) {
  nlohmann::json detail = {
      {"parent", p.parent}, {"move", p.move.to_json()}, {"predicted_s", p.predicted_s}};
  if (p.plan) detail["plan"] = p.plan->to_json();
  detail.update(extra);
  if (Node* x = graph_.find(p.child.key)) {  // a second path to a node: nothing to judge
    graph_.add_edge(p.parent, x->key(), p.move);
    detail["same_as"] = x->key();
    KF_RETURN_IF_ERROR(log_->note_attempt("chat", p.move.text, "duplicate", detail));
    if (x->ok()) current_ = x->key();
    return x;
  }
  if (o_.progress) o_.progress(fmt::format("judging {} ...", p.move.text));
  auto r =
      log_->measure(p.child, "chat", p.move.text, eval_options(p.child.threads, "search"), detail);
  if (!r) return r.error();
  Node& n = search::add_judged(graph_, p, *r, static_cast<int>(graph_.size()) + 1);
  results_[n.key()] = *r;
  details_[n.key()] = detail;
  if (n.ok()) current_ = n.key();
  KF_RETURN_IF_ERROR(publish());
  return &n;
}

nlohmann::json Session::summary() const {
  const Node* best = graph_.best();
  nlohmann::json nodes = nlohmann::json::array();
  int human = 0;
  for (const search::Edge& e : graph_.edges()) human += e.move.proposer == "human";
  return {{"mode", "chat"},
          {"task", env_->compiled.task.name},
          {"nodes", graph_.size()},
          {"edges", graph_.edges().size()},
          {"human_moves", human},
          {"evaluations", log_->evaluations()},
          {"current", current_},
          {"best_candidate", best ? best->key() : ""},
          {"best_median_s", best ? best->median_s : 0.0},
          {"best_min_s", best ? best->min_s : 0.0},
          {"reference_median_s", log_->anchors().reference_median_s},
          {"library_median_s", log_->anchors().library_median_s}};
}

Status Session::publish() {
  const Node* best = graph_.best();
  return store_.update_run(run_id_, "running", best ? best->key() : "", summary());
}

Status Session::close() {
  const Node* best = graph_.best();
  if (!best) return store_.update_run(run_id_, "finished", "", summary());
  OptimizeResult out;
  out.run_id = run_id_;
  out.best = best->candidate;
  out.best_result = results_.at(best->key());
  out.evaluations = log_->evaluations();
  out.attempts = log_->attempts();
  out.reused = log_->reused();
  out.borrowed = log_->borrowed();
  out.first_label = candidate_label(graph_.find(root_)->candidate);
  out.stop_reason = "the person quit";
  out.out_dir = o_.out_dir;
  OptimizeOptions as_run;
  as_run.task_dir = o_.task_dir;
  as_run.threads = o_.threads;
  as_run.brain = env_->brain.name;
  out.summary =
      optimize_summary(env_->compiled.task, as_run, out, log_->reference_median(), log_->journey());
  out.summary["mode"] = "chat";
  out.summary["chat"] = summary();
  KF_RETURN_IF_ERROR(write_optimize_outputs(env_->compiled.task, out));
  return store_.update_run(run_id_, "finished", best->key(), out.summary);
}

std::pair<double, double> Session::reference_times() const {
  const RunLog::Anchors& a = log_->anchors();
  if (a.reference_median_s > 0) return {a.reference_median_s, a.library_median_s};
  for (const auto& [key, r] : results_)
    if (r.timing && r.vs_reference.median > 0)
      return {r.vs_reference.median * r.timing->median_s,
              r.vs_baseline.median * r.timing->median_s};
  return {0, 0};
}

Node* Session::node(const std::string& ref) {
  std::vector<Node*> all = graph_.nodes();
  if (!ref.empty() &&
      std::all_of(ref.begin(), ref.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
    const size_t i = ref.size() > 6 ? 0 : std::stoul(ref);
    return i >= 1 && i <= all.size() ? all[i - 1] : nullptr;
  }
  std::string key = ref.starts_with("#") ? ref.substr(1) : ref;
  Node* found = nullptr;
  for (Node* n : all)
    if (!key.empty() && n->key().starts_with(key)) {
      if (found) return nullptr;  // a prefix of two keys names neither
      found = n;
    }
  return found;
}

int Session::number_of(const std::string& key) const {
  int i = 0;
  for (const Node* n : graph_.nodes()) {
    ++i;
    if (n->key() == key) return i;
  }
  return 0;
}

}  // namespace kf::chat
