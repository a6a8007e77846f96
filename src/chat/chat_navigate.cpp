// The chat session's commands that read and move about the graph, hand it to a policy, edit and
// export (session.h lists them).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>

#include "chat/session.h"
#include "export/export_run.h"
#include "search/policy.h"
#include "support/fs.h"
#include "support/interrupt.h"
#include "support/subprocess.h"
#include "support/text_scan.h"

namespace kf::chat {

using search::Move;
using search::Node;
using search::Proposal;

Expected<std::string> Session::cmd_explain(const std::vector<std::string>& args) {
  const Node* n = args.empty() ? graph_.find(current_) : node(args[0]);
  if (!n) return Status::error(fmt::format("no node {}", excerpt(args.empty() ? "" : args[0])));
  std::string out = node_line(*n) + "\n";
  out +=
      fmt::format("  move: {} ({}), proposed by {}", n->move.text, n->move.kind, n->move.proposer);
  out +=
      n->parent.empty() ? "; the first node\n" : fmt::format(", from #{}\n", number_of(n->parent));
  out += "  kernel: " + excerpt(n->candidate.describe(), 200) + "\n";
  auto d = details_.find(n->key());
  if (d != details_.end() && d->second.contains("plan") && d->second["plan"].is_object()) {
    const nlohmann::json& p = d->second["plan"];
    for (const char* field : {"analysis", "bottleneck", "why"})
      if (const std::string t = p.value(field, std::string()); !t.empty())
        out += fmt::format("  {}: {}\n", field, excerpt(t, 300));
    if (d->second.contains("planned_by"))
      out += fmt::format("  planned by {}, chosen by a person\n",
                         d->second.value("planned_by", std::string()));
  }
  if (n->predicted_s > 0)
    out += fmt::format("  the cost model predicted {:.3f} ms\n", 1e3 * n->predicted_s);
  const RunResult& r = results_.at(n->key());
  if (r.timing)
    out += fmt::format("  timed: median {:.3f} ms, min {:.3f} ms, spread {:.0f}%, {} samples\n",
                       1e3 * r.timing->median_s, 1e3 * r.timing->min_s, 100 * r.timing->spread,
                       r.timing->samples);
  for (const std::string& line : r.diagnostics) out += "  " + excerpt(line, 300) + "\n";
  return out;
}

Expected<std::string> Session::cmd_history(const std::vector<std::string>&) {
  std::string out;
  std::set<std::string> first_edges;
  for (const Node* n : graph_.nodes()) out += node_line(*n) + "\n";
  // Second paths into a node: the same candidate reached by another move.
  for (const Node* n : graph_.nodes()) first_edges.insert(n->parent + ">" + n->key());
  for (const search::Edge& e : graph_.edges())
    if (!first_edges.count(e.parent + ">" + e.child))
      out += fmt::format("  #{} -> #{} again by {} [{}]\n", number_of(e.parent), number_of(e.child),
                         excerpt(e.move.text, 60), e.move.proposer);
  return out + "(> the current node, * the best)\n";
}

Expected<std::string> Session::cmd_goto(const std::vector<std::string>& args) {
  if (args.size() != 1)
    return Status::error("goto NODE (a number from `history`, or a key prefix)");
  const Node* n = node(args[0]);
  if (!n)
    return Status::error(fmt::format("no node {} (or the prefix names several)", excerpt(args[0])));
  current_ = n->key();
  return node_line(*n) + "\n";
}

Expected<std::string> Session::cmd_diff(const std::vector<std::string>& args) {
  // diff: the current node's parent to it; diff A: A to the current node; diff A B.
  const Node* b = args.size() >= 2 ? node(args[1]) : graph_.find(current_);
  const Node* a = !args.empty() ? node(args[0]) : graph_.find(b->parent);
  if (!a || !b)
    return Status::error(args.empty() ? "the current node has no parent: diff A B"
                                      : "no such node: diff takes numbers or key prefixes");
  auto d = unified_diff(a->candidate.source, b->candidate.source,
                        fmt::format("#{}", number_of(a->key())),
                        fmt::format("#{}", number_of(b->key())));
  if (!d) return d.error();
  if (d->empty())
    return fmt::format("#{} and #{} have the same source\n", number_of(a->key()),
                       number_of(b->key()));
  return *d;
}

Expected<std::string> Session::cmd_search(const std::vector<std::string>& args) {
  if (args.size() != 2)
    return Status::error(
        fmt::format("search POLICY N, POLICY one of: {}", fmt::join(search::policy_names(), ", ")));
  auto policy = search::make_policy(args[0], {});
  if (!policy) return policy.error();
  int budget = 0;
  try {
    budget = std::stoi(args[1]);
  } catch (const std::exception&) {
  }
  if (budget < 1 || budget > 1000) return Status::error("search POLICY N: N from 1 to 1000");
  const Node* before = graph_.best();
  const double before_s = before ? before->min_s : 0;
  search::Rng rng(o_.seed + graph_.size());
  search::SearchState s{
      .graph = graph_, .space = *space_, .rng = rng, .results = results_, .root = current_};
  const int start = log_->evaluations();
  std::string out;
  stop_ = false;
  // A policy that proposes only nodes already in the graph ends too: at most 4 rounds a slot.
  for (int round = 0; round < 4 * budget + 8 && log_->evaluations() - start < budget; ++round) {
    if (stop_) {  // the person took the wheel back (the browser's Stop): after a whole evaluation
      out += "stopped by the person\n";
      break;
    }
    std::vector<Proposal> batch = (*policy)->next(s, 1);
    if (batch.empty()) {
      out += "the policy has nothing left to try\n";
      break;
    }
    std::vector<Node*> nodes;
    for (Proposal& p : batch) {
      auto n = judge(std::move(p), {{"policy", (*policy)->name()}});
      if (!n && interrupted()) break;  // Ctrl-C: the evaluation in flight is dropped
      if (!n) return n.error();
      nodes.push_back(*n);
      out += node_line(**n) + "\n";
    }
    if (interrupted()) {
      out += "stopped: interrupted\n";
      break;
    }
    (*policy)->observe(s, nodes);
  }
  const Node* best = graph_.best();
  if (best) current_ = best->key();  // the wheel comes back at the best node
  out += fmt::format("{} judged {} nodes; ", (*policy)->name(), log_->evaluations() - start);
  out += best && best->min_s < before_s
             ? fmt::format("the best is now #{} ({:.2f}x faster than before)\n",
                           number_of(best->key()), before_s / best->min_s)
             : "the best is unchanged\n";
  return out;
}

Expected<std::string> Session::cmd_export(const std::vector<std::string>& args) {
  KF_RETURN_IF_ERROR(publish());
  ExportOptions e{.run = run_id_, .out_dir = o_.out_dir / "export"};
  for (const std::string& a : args) {
    const auto targets = export_target_names();
    if (std::find(targets.begin(), targets.end(), a) != targets.end())
      e.target = a;
    else
      e.out_dir = a;
  }
  auto r = export_run(store_, e);
  if (!r) return r.error();
  std::string out =
      fmt::format("exported the best (#{}, {}) as {} into {}:\n", number_of(r->candidate_key),
                  excerpt(r->recipe, 60), r->call, e.out_dir.string());
  for (const std::string& f : r->files) out += "  " + f + "\n";
  for (const std::string& w : r->warnings) out += "  note: " + w + "\n";
  return out;
}

Expected<std::string> Session::cmd_quit(const std::vector<std::string>&) {
  quit_ = true;
  return fmt::format("run {} kept: `kforge chat {} --run {}` continues it\n", run_id_,
                     o_.task_dir.string(), run_id_);
}

Expected<std::string> Session::run_editor(const std::filesystem::path& file) const {
  std::string editor = o_.editor;
  for (const char* var : {"VISUAL", "EDITOR"})
    if (const char* v = std::getenv(var); editor.empty() && v && *v) editor = v;
  if (editor.empty()) editor = "vi";
  const pid_t pid = fork();
  if (pid < 0) return Status::error("fork: cannot start the editor");
  if (pid == 0) {
    if (!o_.editor_stdin) {
      const int null = ::open("/dev/null", O_RDONLY);
      if (null >= 0) dup2(null, 0);
    }
    // The editor is the person's own command (it may carry arguments); the file is "$1".
    const std::string cmd = editor + " \"$1\"";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), "sh", file.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return Status::error(fmt::format("the editor ({}) failed (status {}): nothing judged",
                                     excerpt(editor),
                                     WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  return read_file(file);
}

Expected<std::string> Session::cmd_edit(const std::vector<std::string>& args) {
  const Node* n = graph_.find(current_);
  const bool schedule = !args.empty() && args[0] == "sched";
  if (schedule && !n->candidate.generated)
    return Status::error("the current node was written, not generated: it has no schedule");
  std::error_code ec;
  std::filesystem::create_directories(o_.out_dir, ec);
  const std::filesystem::path file =
      o_.out_dir / fmt::format("edit-{}.{}", graph_.size() + 1, schedule ? "sched" : "cpp");
  const std::string before = schedule ? n->candidate.generated->schedule : n->candidate.source;
  KF_RETURN_IF_ERROR(write_file_atomic(file, before));
  auto after = run_editor(file);
  if (!after) return after.error();
  if (*after == before) return std::string("no change: nothing judged\n");
  return edit_source(*after, schedule, file.filename().string());
}

Expected<std::string> Session::edit_source(const std::string& text, bool schedule,
                                           const std::string& name) {
  // The checks of --from (size, UTF-8, not empty), then the candidate for the task's target.
  auto sp = StartingPoint::from_text(name, text, schedule);
  if (!sp) return sp.error();
  const Node* n = graph_.find(current_);
  auto c = starting_candidate(*sp, env_->work(&n->candidate, o_.threads));
  if (!c) return c.error();
  if (!schedule) c->kind = agents::SourceKind::edited;
  c->origin = "human:" + name;
  c->parent = current_;
  Proposal p{
      .parent = current_,
      .move = {.kind = "human",
               .text = fmt::format("edit of #{} ({})", number_of(current_), excerpt(name, 40)),
               .proposer = "human"},
      .child = *c,
      .predicted_s = space_->predict(*c)};
  auto judged = judge(std::move(p));
  if (!judged) return judged.error();
  return node_line(**judged) + "\n";
}

}  // namespace kf::chat
