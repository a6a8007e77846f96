#include "search/engine.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <thread>

#include "agents/acceptance.h"
#include "harness/shim.h"
#include "modes/eval_settings.h"
#include "modes/optimize_report.h"
#include "modes/optimize_resume.h"
#include "modes/run_env.h"
#include "modes/run_log.h"
#include "search/policy_internal.h"
#include "search/rank_correlation.h"
#include "support/fs.h"
#include "support/interrupt.h"

namespace kf::search {
namespace {

// The quick timing stage: a candidate whose fastest call after two samples is this many times
// the best's minimum is not timed to the end (its rank is clear; a precise time is not needed).
constexpr double kQuickStopFactor = 3.0;
// The refinement pass walks the knobs of this many of the fastest nodes.
constexpr size_t kRefineTop = 3;

double now_s() {
  return now_epoch_s();
}

class Engine {
 public:
  Engine(SearchOptions o, Store& store, std::string run_id, bool resuming)
      : o_(std::move(o)),
        store_(store),
        run_id_(std::move(run_id)),
        resuming_(resuming),
        console_(o_.progress),
        rng_(o_.seed) {
    events_.add(&console_);
    events_.add(o_.events);
  }
  Expected<SearchResult> run();

 private:
  Status setup();
  Status start();
  Status judge_root();
  // One batch of proposals: duplicates become edges, the rest are compiled in parallel and
  // judged in order. Returns the nodes they became, for the policy.
  Expected<std::vector<Node*>> process(std::vector<Proposal> batch);
  // Whether the proposal's measurement is in the store (read back, not judged).
  bool stored(const Proposal& p) const;
  void precompile(const std::vector<Proposal>& fresh);
  // Hands a remote judge the batch's jobs (those within the budget and not stored), with the
  // options each is judged with (in `options`, one per proposal).
  Status submit(const std::vector<Proposal>& fresh, std::vector<EvalOptions>& options);
  Expected<Node*> judge(const Proposal& p, const EvalOptions& e);
  Expected<bool> refine();
  Expected<SearchResult> finish();
  EvalOptions eval_options(int threads, const std::string& kind) const;
  nlohmann::json edge_detail(const Proposal& p) const {
    return {{"parent", p.parent},
            {"move", p.move.to_json()},
            {"predicted_s", p.predicted_s},
            {"policy", o_.policy}};
  }
  bool budget_left(int evals) const {
    return log_->evaluations() < evals && now_s() - started_ < o_.budget_time_s;
  }
  void say(const std::string& line) const { events_.emit(Note{run_id_, line}); }
  SearchState state() {
    return SearchState{
        .graph = graph_, .space = *space_, .rng = rng_, .results = results_, .root = root_};
  }

  SearchOptions o_;
  Store& store_;
  std::string run_id_;
  bool resuming_;
  ConsoleReporter console_;
  EventSinks events_;
  Rng rng_;
  std::unique_ptr<RunEnv> env_;
  std::unique_ptr<RunLog> log_;
  std::unique_ptr<SearchSpace> space_;
  std::unique_ptr<Policy> policy_;
  SearchGraph graph_;
  std::map<std::string, RunResult> results_;
  MoveStats moves_;  // for the refinement pass's order
  std::string root_;
  const Node* best_ = nullptr;
  double started_ = 0;
  std::string stop_reason_ = "evaluation budget spent";
  // Why the team halted (agents::Brain::halted): the search stops there, resumable.
  std::string halted_;
  bool halted() {
    if (halted_.empty()) halted_ = interrupted() ? interrupt_reason() : env_->brain.halted();
    return !halted_.empty();
  }
};

Status Engine::setup() {
  auto policy = make_policy(o_.policy, o_.policy_options);
  if (!policy) return policy.error();
  policy_ = std::move(*policy);
  auto env = RunEnv::make(RunEnv::options_of(o_, run_id_));
  if (!env) return env.error();
  env_ = std::move(*env);
  space_ = std::make_unique<SearchSpace>(*env_, o_.threads);
  RunLog::Config log = env_->log_config(store_, run_id_, o_.budget_evals, &events_);
  log.earlier_runs_spend = o_.count_stored;
  log_ = std::make_unique<RunLog>(std::move(log));
  if (!resuming_) return {};
  auto p = resume_point(store_, run_id_, env_->task_hash, now_s());
  if (!p) return p.error();
  if (p->task_changed)
    return Status::error(fmt::format(
        "the task changed since search {} measured it: start a new search on the task as it is",
        run_id_));
  KF_RETURN_IF_ERROR(
      log_->resume_at(p->stored_attempts, p->stored_messages, p->attempt_seq, p->message_seq));
  started_ = p->started_epoch_s;
  return {};
}

Status Engine::start() {
  if (!resuming_) started_ = now_s();
  return env_->start_run(store_, events_, run_id_,
                         {.mode = "search",
                          .options = o_.to_json(),
                          .threads = o_.threads,
                          .budget_evals = o_.budget_evals,
                          .budget_time_s = o_.budget_time_s,
                          .resumed = resuming_,
                          .started_epoch_s = started_});
}

EvalOptions Engine::eval_options(int threads, const std::string& kind) const {
  const RunResult* best = best_ ? &results_.at(best_->key()) : nullptr;
  EvalOptions e = eval_options_for(env_->eval_settings(o_.seed, o_.min_time_s, o_.final_min_time_s),
                                   env_->compiled, threads, kind, best, nullptr);
  if (kind != "final" && best && best->timing)
    e.stop_slower_than_s = kQuickStopFactor * best->timing->min_s;
  return e;
}

Expected<Node*> Engine::judge(const Proposal& p, const EvalOptions& e) {
  auto r = log_->measure(p.child, "search", p.move.text, e, edge_detail(p));
  if (!r) return r.error();
  Node& n = add_judged(graph_, p, *r, log_->evaluations());
  results_[n.key()] = *r;
  moves_.record(graph_, n);
  if (n.ok() && (!best_ || n.min_s < best_->min_s)) {
    best_ = &n;
    events_.emit(NewBest{.run_id = run_id_,
                         .candidate = n.key(),
                         .label = candidate_label(n.candidate),
                         .median_s = n.median_s,
                         .min_s = n.min_s,
                         .speedup_vs_naive = log_->reference_median() > 0 && n.median_s > 0
                                                 ? log_->reference_median() / n.median_s
                                                 : 0});
  }
  return &n;
}

Status Engine::judge_root() {
  auto first = o_.from.empty() ? env_->brain.implementer->first(env_->work(nullptr, o_.threads))
                               : starting_candidate(o_.from, env_->work(nullptr, o_.threads));
  if (!first) return first.error().with_context("the first candidate");
  Proposal p{.parent = "", .move = {.kind = "root", .text = candidate_label(*first)}};
  p.move.proposer = env_->brain.roles.at("implementer");
  p.child = *first;
  p.predicted_s = space_->predict(p.child);
  auto n = judge(p, eval_options(p.child.threads, "search"));
  if (!n) return n.error();
  // A first candidate too slow to time at the bench shape (a naive GEMM at 1024^3) is no reason
  // to stop, as in optimize: it is expanded from the program's structure, and the first node
  // judged ok becomes the best. Any other failure ends the search.
  if (!(*n)->ok() && (*n)->verdict != Verdict::timeout)
    return Status::error(fmt::format("the first candidate ({}) was judged {}: {}",
                                     candidate_label(*first), verdict_name((*n)->verdict),
                                     (*n)->message));
  if (!(*n)->ok())
    say("the first candidate (" + candidate_label(*first) + ") ran past the time limit (" +
        (*n)->message + "): expanding it from the program's structure");
  root_ = (*n)->key();
  log_->set_reference_median((*n)->median_s);  // 0 when it timed out: no speedups then
  return {};
}

bool Engine::stored(const Proposal& p) const {
  auto found = store_.find_evaluation(
      evaluation_key(p.child.key, env_->task_identity, env_->machine_id, p.child.threads));
  return found && found->has_value();
}

void Engine::precompile(const std::vector<Proposal>& fresh) {
  if (o_.jobs <= 1 || env_->simulated() || fresh.size() < 2) return;
  std::vector<std::pair<std::string, CompileOptions>> work;
  for (const Proposal& p : fresh) {
    if (stored(p)) continue;  // read back, not judged: nothing to compile
    work.emplace_back(p.child.source, eval_options(p.child.threads, "search").compile);
  }
  const EntryShim shim = entry_shim(env_->compiled.task, ShimKind::candidate);
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int j = 0; j < o_.jobs; ++j)
    pool.emplace_back([&] {
      for (size_t i = next++; i < work.size(); i = next++)
        (void)env_->backend->compile(work[i].first, shim, work[i].second);
    });
  for (std::thread& t : pool) t.join();
}

Status Engine::submit(const std::vector<Proposal>& fresh, std::vector<EvalOptions>& options) {
  size_t left = static_cast<size_t>(std::max(0, o_.budget_evals - log_->evaluations()));
  for (const Proposal& p : fresh) {
    options.push_back(eval_options(p.child.threads, "search"));
    if (stored(p)) continue;  // read back, not judged
    if (left == 0) continue;  // past the budget: never judged
    --left;
    EvalOptions e = options.back();
    e.origin = candidate_label(p.child);  // as the run log gives it (not part of the job's id)
    KF_RETURN_IF_ERROR(env_->judge().submit(env_->compiled.task, p.child.source, e));
  }
  return {};
}

Expected<std::vector<Node*>> Engine::process(std::vector<Proposal> batch) {
  std::vector<Node*> nodes;
  std::vector<Proposal> fresh;
  for (Proposal& p : batch) {
    if (Node* x = graph_.find(p.child.key)) {
      graph_.add_edge(p.parent, x->key(), p.move);
      nlohmann::json d = edge_detail(p);
      d["same_as"] = x->key();
      KF_RETURN_IF_ERROR(log_->note_attempt("search", p.move.text, "duplicate", d));
      nodes.push_back(x);
    } else {
      fresh.push_back(std::move(p));
    }
  }
  // A remote judge measures the batch at once, all with the options of the batch's start (the
  // best it is compared with); here each is judged with the best as it stands then.
  std::vector<EvalOptions> remote;
  if (env_->judge().remote()) {
    KF_RETURN_IF_ERROR(submit(fresh, remote));
  } else {
    precompile(fresh);
  }
  for (size_t i = 0; i < fresh.size(); ++i) {
    const Proposal& p = fresh[i];
    if (!budget_left(o_.budget_evals)) break;
    if (graph_.find(p.child.key)) continue;  // twice in one batch
    auto n = judge(p, remote.empty() ? eval_options(p.child.threads, "search") : remote[i]);
    if (!n) return n.error();
    nodes.push_back(*n);
  }
  return nodes;
}

Expected<bool> Engine::refine() {
  std::vector<Proposal> ps;
  std::set<std::string> seen;
  const auto ranked = graph_.ranked();
  for (size_t i = 0; i < ranked.size() && i < kRefineTop; ++i)
    for (Proposal& p : space_->knob_moves(ranked[i]->candidate))
      if (!graph_.find(p.child.key) && seen.insert(p.child.key).second) ps.push_back(std::move(p));
  // By prediction, then what the same knob moves did elsewhere (a change seen to fail, or a
  // reordering of a judged recipe, goes last): the top nodes are often near-identical and would
  // otherwise all take the same best-predicted change.
  by_prediction(ps);
  std::stable_sort(ps.begin(), ps.end(), [&](const Proposal& a, const Proposal& b) {
    return moves_.classify(a) < moves_.classify(b);
  });
  if (ps.empty()) return false;
  ps.resize(std::min(ps.size(), static_cast<size_t>(std::max(1, o_.jobs))));
  for (Proposal& p : ps) p.move.kind = "knob";
  auto nodes = process(std::move(ps));
  if (!nodes) return nodes.error();
  return !nodes->empty();
}

Expected<SearchResult> Engine::run() {
  KF_RETURN_IF_ERROR(setup());
  KF_RETURN_IF_ERROR(start());
  if (Status root = judge_root(); !root.ok())
    return halted() ? halted_before_a_best(store_, run_id_, "search", halted_) : root;
  const int main_budget =
      std::max(1, static_cast<int>(std::lround(o_.budget_evals *
                                               (1.0 - std::clamp(o_.refine_share, 0.0, 1.0)))));
  while (budget_left(main_budget)) {
    SearchState s = state();
    std::vector<Proposal> batch = policy_->next(s, static_cast<size_t>(std::max(1, o_.jobs)));
    if (halted()) break;
    if (batch.empty()) {
      stop_reason_ = "the policy has nothing left to try";
      break;
    }
    auto nodes = process(std::move(batch));
    if (!nodes && halted()) break;  // the batch's judged nodes are in; the rest is replayed
    if (!nodes) return nodes.error();
    policy_->observe(s, *nodes);
  }
  if (!halted() && budget_left(o_.budget_evals)) say("refining the knobs of the fastest nodes");
  while (!halted() && budget_left(o_.budget_evals)) {
    auto more = refine();
    if (!more && halted()) break;
    if (!more) return more.error();
    if (!*more) {
      if (stop_reason_ == "evaluation budget spent") stop_reason_ = "no new neighbour to refine";
      break;
    }
  }
  if (halted()) {
    stop_reason_ = halted_;
    say(fmt::format("stopped: {}\n  `kforge search --resume {}` continues the search", halted_,
                    run_id_));
    return finish();
  }
  if (now_s() - started_ >= o_.budget_time_s) stop_reason_ = "time budget spent";
  say("stop: " + stop_reason_);
  return finish();
}

// Evaluations the search took to come within 90% of its best (by minimum time): the first
// judged node at most best / 0.9.
int evals_to_90(const SearchGraph& g, double best_min) {
  int first = 0;
  for (const Node* n : g.ranked())
    if (n->min_s <= best_min / 0.9 && (first == 0 || n->eval_index < first)) first = n->eval_index;
  return first;
}

Expected<SearchResult> Engine::finish() {
  OptimizeResult out;
  out.run_id = run_id_;
  std::vector<const Node*> ranked = graph_.ranked();
  if (ranked.empty()) return Status::error("no candidate passed");
  const Node* best = ranked.front();
  out.first_label = candidate_label(graph_.find(root_)->candidate);
  if (o_.final_run && !halted()) {
    // The final run judges the best again on fresh inputs, side by side with the reference and
    // the library; a best that fails it gives way to the next fastest node (at most 3 tries).
    for (size_t i = 0; i < ranked.size() && i < 3; ++i) {
      best = ranked[i];
      auto f = log_->measure(best->candidate, "final", "final",
                             eval_options(best->candidate.threads, "final"));
      if (!f && halted()) {  // interrupted during the final run: finished without it
        out.final_result.reset();
        best = ranked.front();
        stop_reason_ = halted_;
        break;
      }
      if (!f) return f.error();
      out.final_result = *f;
      if (f->verdict == Verdict::ok) break;
      say(fmt::format("final: {} failed on fresh inputs: {}", best->move.text, f->message));
    }
  }
  out.best = best->candidate;
  out.best_result = results_.at(best->key());
  out.stop_reason = stop_reason_;
  out.out_dir = o_.out_dir.empty() ? default_output_dir(run_id_) : o_.out_dir;
  summarize_run(out, env_->compiled.task, o_.task_dir, o_.threads, env_->brain.name, *log_);
  std::vector<double> predicted, measured;
  for (const Node* n : ranked)
    if (n->predicted_s > 0) {
      predicted.push_back(n->predicted_s);
      measured.push_back(n->min_s);
    }
  const auto rho = spearman(predicted, measured);
  const double wall = now_s() - started_;
  out.summary["mode"] = "search";
  out.summary["search"] = {
      {"policy", o_.policy},
      {"seed", o_.seed},
      {"jobs", o_.jobs},
      {"nodes", graph_.size()},
      {"edges", graph_.edges().size()},
      {"best_min_s", best->min_s},
      {"best_eval_index", best->eval_index},
      {"evals_to_90pct", evals_to_90(graph_, ranked.front()->min_s)},
      {"cost_model_spearman", rho ? nlohmann::json(*rho) : nlohmann::json()},
      {"cost_model_pairs", predicted.size()},
      {"wall_s", wall},
      {"evals_per_minute", wall > 0 ? 60.0 * log_->evaluations() / wall : 0.0}};
  KF_RETURN_IF_ERROR(write_optimize_outputs(env_->compiled.task, out));
  KF_RETURN_IF_ERROR(store_.update_run(run_id_, end_state(halted_), best->key(), out.summary));
  events_.emit(RunEnded{.run_id = run_id_,
                        .stop_reason = stop_reason_,
                        .best_candidate = best->key(),
                        .evaluations = out.evaluations,
                        .attempts = out.attempts,
                        .reused = out.reused,
                        .borrowed = out.borrowed,
                        .best_median_s = best->median_s,
                        .final_verdict = out.final_result
                                             ? std::string(verdict_name(out.final_result->verdict))
                                             : ""});
  return SearchResult{.run_id = run_id_, .summary = out.summary, .out_dir = out.out_dir};
}

}  // namespace

Expected<SearchResult> search(const SearchOptions& o, Store& store) {
  Engine e(o, store, new_run_id(), false);
  return e.run();
}

Expected<SearchResult> resume_search(const std::string& run_id, Store& store,
                                     const SearchOptions& overrides) {
  auto run = store.get_run(run_id);
  if (!run) return run.error();
  if (run->mode != "search") return Status::error("run " + run_id + " is a " + run->mode + " run");
  if (!resumable_state(run->state))
    return Status::error("run " + run_id + " has " + run->state + " already");
  auto o = SearchOptions::from_json(run->options);
  if (!o) return o.error();
  o->progress = overrides.progress;
  o->events = overrides.events;
  o->llm = overrides.llm;
  o->broker = overrides.broker.over(o->broker);
  Engine e(*o, store, run_id, true);
  return e.run();
}

std::string search_summary_text(const nlohmann::json& summary) {
  if (!summary.contains("search") || !summary["search"].is_object()) return "";
  const nlohmann::json& s = summary["search"];
  const auto rho = s.value("cost_model_spearman", nlohmann::json());
  return fmt::format(
      "search: policy {} (seed {}, jobs {}), {} nodes and {} edges; the best found at evaluation "
      "{}, "
      "90% of it at evaluation {}; {:.1f} evaluations a minute; cost model rank "
      "correlation {} over {} candidates\n",
      s.value("policy", ""), s.value("seed", 0), s.value("jobs", 1), s.value("nodes", 0),
      s.value("edges", 0), s.value("best_eval_index", 0), s.value("evals_to_90pct", 0),
      s.value("evals_per_minute", 0.0),
      rho.is_number() ? fmt::format("{:.2f}", rho.get<double>()) : std::string("n/a"),
      s.value("cost_model_pairs", 0));
}

}  // namespace kf::search
