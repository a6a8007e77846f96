#include "serve/serve_api.h"

#include <fmt/format.h>

#include <set>
#include <sstream>

#include "harness/run_result.h"
#include "report/html_text.h"
#include "report/report.h"
#include "report/svg.h"
#include "support/json_text.h"
#include "support/subprocess.h"
#include "support/text_scan.h"

namespace kf::serve {
namespace {

// The chat commands the browser may send: none of them names a file or starts a program.
const std::set<std::string> kBrowserCommands = {"plan", "apply",   "eval",    "profile",
                                                "tune", "explain", "history", "goto",
                                                "diff", "search",  "status",  "help"};

ApiReply error(int status, const std::string& message) {
  return {status, {{"error", message}}};
}

Expected<nlohmann::json> parse_body(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error("the body is not a JSON object");
  return j;
}

nlohmann::json result_json(const nlohmann::json& r) {
  nlohmann::json out = {{"verdict", r.value("verdict", "")}, {"message", r.value("message", "")}};
  for (const char* part : {"timing", "roofline", "vs_reference", "vs_baseline"})
    if (r.contains(part)) out[part] = r[part];
  if (out.contains("timing") && out["timing"].is_object()) out["timing"].erase("per_run_s");
  return out;
}

}  // namespace

Api::~Api() {
  close_sessions();
}

Expected<std::unique_ptr<SqliteStore>> Api::open() const {
  return SqliteStore::open(store_path);
}

ApiReply Api::runs() {
  auto store = open();
  if (!store) return error(500, store.error().message());
  auto list = (*store)->list_runs();
  if (!list) return error(500, list.error().message());
  nlohmann::json runs = nlohmann::json::array();
  for (const RunRecord& r : *list) {
    const nlohmann::json& s = r.summary;
    double best = 0;
    if (s.is_object() && s.contains("best") && s["best"].is_object())
      best = s["best"].value("median_s", 0.0);
    else if (s.is_object())
      best = s.value("best_median_s", 0.0);
    runs.push_back({{"id", r.id},
                    {"task", r.task_name},
                    {"mode", r.mode},
                    {"state", r.state},
                    {"brain", r.brain},
                    {"created_at", r.created_at},
                    {"best_candidate", r.best_candidate},
                    {"best_median_s", best}});
  }
  return {200, {{"runs", runs}}};
}

ApiReply Api::run(const std::string& id) {
  auto store = open();
  if (!store) return error(500, store.error().message());
  auto d = report::load_report(**store, id);
  if (!d) return error(404, d.error().message());
  const std::vector<report::GraphNode> nodes = report::graph_of(*d);
  const std::vector<report::CurvePoint> points = report::curve_of(*d);
  const auto [ref, lib] = report::anchors(*d);
  nlohmann::json curve = nlohmann::json::array();
  for (const report::CurvePoint& p : points)
    curve.push_back({{"evaluation", p.evaluation}, {"median_s", p.median_s}});
  nlohmann::json list = nlohmann::json::array();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const report::GraphNode& n = nodes[i];
    list.push_back({{"n", i + 1},
                    {"key", n.key},
                    {"parent", n.parent},
                    {"label", n.label},
                    {"verdict", n.verdict},
                    {"proposer", n.proposer},
                    {"median_s", n.median_s},
                    {"best", n.best}});
  }
  std::string current;
  {
    const std::lock_guard lock(mu_);
    auto it = live_.find(id);
    if (it != live_.end() && it->second->busy.try_lock()) {
      current = it->second->session->current();
      it->second->busy.unlock();
    }
  }
  return {200,
          {{"run",
            {{"id", d->run.id},
             {"task", d->run.task_name},
             {"mode", d->run.mode},
             {"state", d->run.state},
             {"brain", d->run.brain},
             {"best_candidate", d->run.best_candidate},
             {"created_at", d->run.created_at}}},
           {"nodes", list},
           {"current", current},
           {"reference_s", ref},
           {"library_s", lib},
           {"steerable", d->run.mode == "chat"},
           {"curve", curve},
           {"tree_svg", report::tree_svg(nodes)},
           {"curve_svg", report::curve_svg(points, ref, lib)}}};
}

ApiReply Api::node(const std::string& run, const std::string& key) {
  auto store = open();
  if (!store) return error(500, store.error().message());
  auto attempts = (*store)->attempts(run);
  if (!attempts) return error(500, attempts.error().message());
  const AttemptRecord* a = nullptr;
  for (const AttemptRecord& x : *attempts)
    if (x.candidate_key == key && x.verdict != "duplicate" && !x.evaluation_key.empty()) {
      a = &x;
      break;
    }
  if (!a) return error(404, fmt::format("run {} has no node {}", excerpt(run), excerpt(key)));
  auto c = (*store)->get_candidate(key);
  auto e = (*store)->find_evaluation(a->evaluation_key);
  if (!c || !c->has_value() || !e || !e->has_value())
    return error(500, "the node's candidate or evaluation is missing from the store");
  nlohmann::json out = {{"key", key},
                        {"seq", a->seq},
                        {"kind", (*c)->provenance.value("kind", "")},
                        {"origin", (*c)->provenance.value("origin", "")},
                        {"schedule", (*c)->schedule},
                        {"code_html", report::highlight_cpp((*c)->source)},
                        {"source", (*c)->source},
                        {"result", result_json((*e)->result)}};
  std::string parent = (*c)->provenance.value("parent", "");
  if (a->detail.is_object()) {
    parent = a->detail.value("parent", parent);
    for (const char* f : {"move", "plan", "planned_by", "policy"})
      if (a->detail.contains(f)) out[f] = a->detail[f];
  }
  out["parent"] = parent;
  // The profiler's findings on this node, when a person asked for them (`profile`).
  if (auto messages = (*store)->messages(run))
    for (const MessageRecord& m : *messages)
      if (m.type == "Profile" && m.body.is_object() && m.body.value("node", "") == key)
        out["profile"] = m.body.value("evidence", nlohmann::json::object());
  if (!parent.empty())
    if (auto p = (*store)->get_candidate(parent); p && p->has_value()) {
      auto d = unified_diff((*p)->source, (*c)->source, "parent", "this node");
      out["diff"] = d ? *d : "(no diff: " + d.error().message() + ")";
    }
  return {200, out};
}

Expected<Api::Live*> Api::live(const std::string& run) {
  const std::lock_guard lock(mu_);
  auto it = live_.find(run);
  if (it != live_.end()) return it->second.get();
  auto l = std::make_unique<Live>();
  auto store = open();
  if (!store) return store.error();
  l->store = std::move(*store);
  auto s = chat::Session::open({.run = run}, *l->store);
  if (!s) return s.error();
  l->session = std::move(*s);
  return (live_[run] = std::move(l)).get();
}

ApiReply Api::steer(const std::string& run,
                    const std::function<Expected<std::string>(chat::Session&)>& f) {
  auto l = live(run);
  if (!l) return error(400, l.error().message());
  std::unique_lock lock((*l)->busy, std::try_to_lock);
  if (!lock) return error(409, "a command is running on this run: wait for it");
  auto answer = f(*(*l)->session);
  if (!answer) return error(400, answer.error().message());
  return {200, {{"answer", *answer}, {"current", (*l)->session->current()}}};
}

ApiReply Api::command(const std::string& run, const std::string& body) {
  auto j = parse_body(body);
  if (!j) return error(400, j.error().message());
  if (!(*j).contains("line") || !(*j)["line"].is_string())
    return error(400, "{\"line\": \"plan\"}: a command line is required");
  const std::string line = (*j)["line"];
  std::istringstream words(line);
  std::string first;
  words >> first;
  if (!kBrowserCommands.count(first))
    return error(400, fmt::format("'{}' is not a command the browser may send ({})", excerpt(first),
                                  fmt::join(kBrowserCommands, ", ")));
  return steer(run, [&](chat::Session& s) { return s.run(line); });
}

ApiReply Api::edit(const std::string& run, const std::string& body) {
  auto j = parse_body(body);
  if (!j) return error(400, j.error().message());
  if (!(*j).contains("source") || !(*j)["source"].is_string())
    return error(400, "{\"source\": \"...\"}: the edited kernel is required");
  const std::string source = (*j)["source"];
  const bool schedule = (*j).value("schedule", false);
  // The node the person edited (the page shows any node): it becomes the current one first.
  const std::string node = (*j).contains("node") && (*j)["node"].is_string() ? (*j)["node"] : "";
  return steer(run, [&](chat::Session& s) {
    if (!node.empty())
      if (auto moved = s.run("goto " + node); !moved) return moved;
    return s.edit_source(
        source, schedule,
        fmt::format("browser-edit-{}.{}", s.graph().size() + 1, schedule ? "sched" : "cpp"));
  });
}

ApiReply Api::stop(const std::string& run) {
  const std::lock_guard lock(mu_);
  auto it = live_.find(run);
  if (it == live_.end()) return error(409, "nothing is running on this run from this server");
  it->second->session->request_stop();
  return {200, {{"answer", "asked the search to stop after the evaluation in flight"}}};
}

std::string Api::version(Store& store, const std::string& run) {
  auto r = store.get_run(run);
  auto next = store.next_attempt_seq(run);
  if (!r || !next) return "{}";
  return dump_json({{"attempts", *next - 1}, {"state", r->state}, {"updated_at", r->updated_at}});
}

void Api::close_sessions() {
  const std::lock_guard lock(mu_);
  for (auto& [run, l] : live_) {
    const std::lock_guard busy(l->busy);
    (void)l->session->close();
  }
  live_.clear();
}

}  // namespace kf::serve
