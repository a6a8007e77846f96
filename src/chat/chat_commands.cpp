// The chat session's commands (session.h lists them); each returns its answer for the person.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <sstream>

#include "agents/builtin/brain.h"
#include "chat/session.h"
#include "support/text_scan.h"

namespace kf::chat {

using search::Move;
using search::Node;
using search::Proposal;

struct Session::Command {
  const char* name;
  const char* args;
  const char* help;
  Expected<std::string> (Session::*run)(const std::vector<std::string>&);
};

const std::vector<Session::Command>& Session::commands() {
  static const std::vector<Command> list = {
      {"plan", "[N]", "the planner's N best proposals for the current node, with its reasons",
       &Session::cmd_plan},
      {"apply", "N | TEXT", "judge proposal N (or, with an LLM, a free-text instruction)",
       &Session::cmd_apply},
      {"edit", "[sched]", "edit the current kernel (or its schedule) in $EDITOR and judge it",
       &Session::cmd_edit},
      {"eval", "[NODE]", "judge a node again, side by side with the reference and the library",
       &Session::cmd_eval},
      {"profile", "", "the profiler's findings on the current node (plan uses them)",
       &Session::cmd_profile},
      {"tune", "[STRATEGY.KNOB=VALUE]",
       "judge the knobs one value away (the autotuner), or set one knob", &Session::cmd_tune},
      {"explain", "[NODE]", "why a node exists: its move, plan, verdict and measurements",
       &Session::cmd_explain},
      {"history", "", "every node, in the order they joined the graph", &Session::cmd_history},
      {"goto", "NODE", "make a node the current one (a number or a key prefix)",
       &Session::cmd_goto},
      {"diff", "[A] [B]", "the source diff from A to B (default: the current node's parent)",
       &Session::cmd_diff},
      {"search", "POLICY N", "hand the wheel to a search policy for N evaluations",
       &Session::cmd_search},
      {"export", "[DIR] [TARGET]", "the best kernel as a header, a source and a CMake target",
       &Session::cmd_export},
      {"status", "", "the task, the current node and the best", &Session::cmd_status},
      {"help", "", "this list", &Session::cmd_help},
      {"quit", "", "end the session (the run can be continued with --run)", &Session::cmd_quit},
  };
  return list;
}

std::vector<std::string> Session::command_names() {
  std::vector<std::string> out;
  for (const Command& c : commands()) out.emplace_back(c.name);
  return out;
}

Expected<std::string> Session::run(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.empty()) return std::string();
  const std::string name = words[0] == "exit" || words[0] == "q" ? "quit" : words[0];
  words.erase(words.begin());
  KF_RETURN_IF_ERROR(sync());  // another session (a browser, a terminal) may have moved on
  for (const Command& c : commands())
    if (name == c.name) try {
        return (this->*c.run)(words);
      } catch (const std::exception& e) {  // a library's exception on odd input: one command lost
        return Status::error(fmt::format("{}: {}", c.name, e.what()));
      }
  return Status::error(fmt::format("unknown command '{}': `help` lists them", excerpt(name)));
}

namespace {

std::string ms(double s) {
  return s > 0 ? fmt::format("{:.3f} ms", 1e3 * s) : "-";
}

std::string times(double ratio) {
  return ratio > 0 ? fmt::format("{:.2f}x", ratio) : "-";
}

}  // namespace

std::string Session::node_line(const Node& n) const {
  const Node* best = graph_.best();
  const char mark = n.key() == current_ ? '>' : (best == &n ? '*' : ' ');
  return fmt::format("{}#{:<3} {:<40} [{}] {}", mark, number_of(n.key()), excerpt(n.move.text, 40),
                     n.move.proposer, result_line(n));
}

std::string Session::result_line(const Node& n) const {
  if (!n.ok()) return fmt::format("{}: {}", verdict_name(n.verdict), excerpt(n.message, 100));
  const auto [ref, lib] = reference_times();
  const RunResult& r = results_.at(n.key());
  return fmt::format("{}  {} the reference, {} the library, {} of the roofline", ms(n.median_s),
                     times(ref / n.median_s), times(lib / n.median_s),
                     r.roofline ? fmt::format("{:.0f}%", 100 * r.roofline->fraction) : "-");
}

Expected<std::string> Session::cmd_help(const std::vector<std::string>&) {
  std::string out;
  for (const Command& c : commands())
    out += fmt::format("  {:<8} {:<22} {}\n", c.name, c.args, c.help);
  return out;
}

std::string Session::status() const {
  const Node* best = graph_.best();
  std::string out = fmt::format("task {} ({}): {} nodes, {} evaluations in run {}\n",
                                env_->compiled.task.name, excerpt(env_->compiled.task.description),
                                graph_.size(), log_->evaluations(), run_id_);
  if (const Node* c = graph_.find(current_)) out += "current " + node_line(*c) + "\n";
  if (best && best->key() != current_) out += "best    " + node_line(*best) + "\n";
  return out;
}

Expected<std::string> Session::cmd_status(const std::vector<std::string>&) {
  return status();
}

Expected<std::string> Session::cmd_plan(const std::vector<std::string>& args) {
  const size_t max = args.empty() ? 6 : std::clamp<size_t>(std::atoi(args[0].c_str()), 1, 20);
  const Node* n = graph_.find(current_);
  auto it = profiles_.find(current_);
  const agents::Evidence evidence =
      it != profiles_.end()
          ? it->second
          : agents::evidence_from_result(results_.at(current_), n->candidate.threads);
  proposals_ = space_->strategies(n->candidate, evidence, max);
  proposals_for_ = current_;
  if (proposals_.empty()) return std::string("the planner has nothing to propose for this node\n");
  std::string out =
      fmt::format("proposals for #{} ({}):\n", number_of(current_), excerpt(n->move.text, 60));
  nlohmann::json listed = nlohmann::json::array();
  for (size_t i = 0; i < proposals_.size(); ++i) {
    const Proposal& p = proposals_[i];
    out += fmt::format("{:>3}. {}  (predicted {})\n", i + 1, p.move.text, ms(p.predicted_s));
    if (p.plan) {
      if (p.plan->expected_speedup > 0)
        out += fmt::format("       expected {:.2f}x: {}\n", p.plan->expected_speedup,
                           excerpt(p.plan->why, 200));
      if (!p.plan->bottleneck.empty())
        out += fmt::format("       bottleneck: {}\n", excerpt(p.plan->bottleneck, 200));
      listed.push_back(p.plan->to_json());
    }
  }
  KF_RETURN_IF_ERROR(log_->message(env_->brain.roles.at("planner"), "human", "Plan",
                                   {{"node", current_}, {"proposals", listed}}));
  return out + "`apply N` judges one\n";
}

Expected<std::string> Session::cmd_apply(const std::vector<std::string>& args) {
  if (args.empty()) return Status::error("apply N (a proposal of `plan`) or apply TEXT");
  const std::string& a = args[0];
  Proposal p;
  nlohmann::json extra = nlohmann::json::object();
  if (std::all_of(a.begin(), a.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
      args.size() == 1) {
    if (proposals_for_ != current_ || proposals_.empty())
      return Status::error("no proposals for the current node: run `plan` first");
    const size_t i = a.size() > 3 ? 0 : std::stoul(a);
    if (i < 1 || i > proposals_.size())
      return Status::error(fmt::format("no proposal {}: `plan` listed {}", a, proposals_.size()));
    p = proposals_[i - 1];
    extra["planned_by"] = p.move.proposer;
  } else {  // a free-text instruction for the implementer (an LLM carries it out)
    agents::Plan plan;
    plan.text = std::accumulate(std::next(args.begin()), args.end(), a,
                                [](std::string s, const std::string& w) { return s + " " + w; });
    const Node* n = graph_.find(current_);
    auto child = env_->brain.implementer->implement(plan, env_->work(&n->candidate, o_.threads));
    if (!child)
      return Status::error(fmt::format("the implementer ({}) cannot carry out free text: {}",
                                       env_->brain.roles.at("implementer"),
                                       child.error().message()));
    p = {.parent = current_,
         .move = {.kind = "llm", .text = excerpt(plan.text, 120)},
         .child = *child,
         .predicted_s = space_->predict(*child),
         .plan = plan};
  }
  p.move.proposer = "human";
  auto n = judge(std::move(p), extra);
  if (!n) return n.error();
  return node_line(**n) + "\n";
}

Expected<std::string> Session::cmd_eval(const std::vector<std::string>& args) {
  Node* n = args.empty() ? graph_.find(current_) : node(args[0]);
  if (!n) return Status::error(fmt::format("no node {}", excerpt(args.empty() ? "" : args[0])));
  if (o_.progress) o_.progress(fmt::format("judging #{} again ...", number_of(n->key())));
  auto r = log_->measure(n->candidate, "confirm", "eval " + n->move.text,
                         eval_options(n->candidate.threads, "final"),
                         {{"node", n->key()}, {"by", "human"}});
  if (!r) return r.error();
  if (r->verdict != Verdict::ok || !r->timing)
    return fmt::format("#{} {}: {}\n", number_of(n->key()), verdict_name(r->verdict),
                       excerpt(r->message, 200));
  return fmt::format(
      "#{} ok on fresh inputs: {} (min {}, spread {:.0f}%), {} the reference, {} the library "
      "({}), {} of the roofline\n",
      number_of(n->key()), ms(r->timing->median_s), ms(r->timing->min_s), 100 * r->timing->spread,
      times(r->vs_reference.median), times(r->vs_baseline.median),
      r->baseline_name.empty() ? "none" : r->baseline_name,
      r->roofline ? fmt::format("{:.0f}%", 100 * r->roofline->fraction) : "-");
}

Expected<std::string> Session::cmd_profile(const std::vector<std::string>&) {
  const Node* n = graph_.find(current_);
  agents::ProfileInput in{.task = &env_->compiled,
                          .candidate = &n->candidate,
                          .result = &results_.at(current_),
                          .machine = &env_->machine,
                          .target = &env_->target,
                          .cxx = env_->cxx()};
  const agents::Evidence e = env_->brain.profiler->profile(in);
  profiles_[current_] = e;
  KF_RETURN_IF_ERROR(log_->message(env_->brain.roles.at("profiler"), "human", "Profile",
                                   {{"node", current_}, {"evidence", e.to_json()}}));
  std::string out = fmt::format(
      "#{}: {}-bound at {:.0f}% of the attainable roofline ({:.1f} GFLOP/s, {:.1f} GB/s), {:.1f} "
      "CPUs busy of {}\n",
      number_of(current_), e.bound.empty() ? "not measured:" : e.bound, 100 * e.fraction, e.gflops,
      e.gbps, e.cpus_busy, e.threads);
  for (const auto& [stage, share] : e.stage_shares)
    out += fmt::format("  stage {}: {:.0f}% of the time\n", stage, 100 * share);
  for (const std::string& f : e.findings) out += "  - " + excerpt(f, 300) + "\n";
  return out + "`plan` now plans from these findings\n";
}

Expected<std::string> Session::cmd_tune(const std::vector<std::string>& args) {
  const Node* start = graph_.find(current_);
  const std::string from = current_;
  std::vector<Proposal> ps;
  if (args.empty()) {
    if (!start->candidate.generated)
      return Status::error(
          fmt::format("#{} is written source, not generated from a recipe: it has no knobs to tune",
                      number_of(current_)));
    for (Proposal& p : space_->knob_moves(start->candidate))
      if (!graph_.find(p.child.key)) ps.push_back(std::move(p));
    search::by_prediction(ps);
    if (ps.size() > 4) ps.resize(4);
    for (Proposal& p : ps) {
      p.move.kind = "knob";
      p.move.proposer = env_->brain.roles.at("autotuner");
    }
  } else {  // STRATEGY.KNOB=VALUE: a knob a person sets
    const std::string& a = args[0];
    const size_t dot = a.find('.'), eq = a.find('=');
    if (dot == std::string::npos || eq == std::string::npos || eq < dot)
      return Status::error("tune STRATEGY.KNOB=VALUE, as in register_block.nr=48");
    if (!start->candidate.generated)
      return Status::error("the current node was not generated from a recipe: it has no knobs");
    const std::string strategy = a.substr(0, dot), knob = a.substr(dot + 1, eq - dot - 1);
    int64_t value = 0;
    try {
      value = std::stoll(a.substr(eq + 1));
    } catch (const std::exception&) {
      return Status::error(fmt::format("'{}' is not a whole number", excerpt(a.substr(eq + 1))));
    }
    agents::Recipe r = start->candidate.generated->recipe;
    auto step = std::find_if(r.steps.begin(), r.steps.end(),
                             [&](const auto& s) { return s.strategy == strategy; });
    if (step == r.steps.end())
      return Status::error(
          fmt::format("the current recipe has no step '{}': {}", excerpt(strategy), r.to_string()));
    step->knobs[knob] = value;
    auto child = agents::builtin::generate(r, env_->work(&start->candidate, o_.threads),
                                           fmt::format("human:{}={}", knob, value));
    if (!child) return child.error();
    ps.push_back({.parent = current_,
                  .move = {.kind = "knob", .text = excerpt(a, 80), .proposer = "human"},
                  .child = *child,
                  .predicted_s = space_->predict(*child)});
  }
  if (ps.empty()) return std::string("no knob of the current node is left to move\n");
  std::string out;
  for (Proposal& p : ps) {
    p.parent = from;
    auto n = judge(std::move(p));
    if (!n) return n.error();
    out += node_line(**n) + "\n";
  }
  // The wheel stays with the fastest of the node and what tuning judged.
  current_ = from;
  for (const std::string& k : graph_.find(from)->children)
    if (const Node* c = graph_.find(k); c && c->ok() && c->min_s < graph_.find(current_)->min_s)
      current_ = k;
  return out + fmt::format("current: #{}\n", number_of(current_));
}

}  // namespace kf::chat
