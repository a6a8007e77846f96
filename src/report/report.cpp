#include "report/report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "report/html_text.h"
#include "report/svg.h"
#include "support/fs.h"

namespace kf::report {
namespace {

std::string str(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

double num(const nlohmann::json& j, const char* key) {
  if (!j.is_object()) return 0;
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}

std::string ms(double s) {
  return s > 0 ? fmt::format("{:.3f} ms", s * 1e3) : "-";
}

std::string ratio(double x) {
  return x > 0 ? fmt::format("{:.2f}x", x) : "-";
}

std::string percent(double f) {
  return f > 0 ? fmt::format("{:.0f}%", 100 * f) : "-";
}

// The anchors' times: the final run's side-by-side ratios when there is one, else the first
// attempt that carries a speedup over them (modes/run_log.h, "Anchors").
}  // namespace

std::pair<double, double> anchors(const ReportData& d) {
  const nlohmann::json& f = d.run.summary.is_object() && d.run.summary.contains("final")
                                ? d.run.summary["final"]
                                : nlohmann::json();
  double ref = 0, lib = 0;
  if (f.is_object()) {
    const double median = num(f, "median_s");
    ref = median * num(f.value("vs_reference", nlohmann::json()), "median");
    lib = median * num(f.value("vs_baseline", nlohmann::json()), "median");
  }
  for (const AttemptRecord& a : d.attempts) {
    if (ref == 0 && a.median_s > 0) ref = a.median_s * num(a.detail, "vs_reference");
    if (lib == 0 && a.median_s > 0) lib = a.median_s * num(a.detail, "vs_library");
  }
  return {ref, lib};
}

// A search run's nodes are its attempts with an edge; an optimize run's, each candidate it
// measured, under the candidate it was derived from.
std::vector<GraphNode> graph_of(const ReportData& d) {
  std::vector<GraphNode> nodes;
  std::set<std::string> seen;
  for (const AttemptRecord& a : d.attempts) {
    if (a.candidate_key.empty() || a.kind == "final" || a.verdict == "duplicate") continue;
    if (!seen.insert(a.candidate_key).second) continue;
    GraphNode n{.key = a.candidate_key,
                .verdict = a.verdict,
                .median_s = a.median_s,
                .seq = a.seq,
                .best = a.candidate_key == d.run.best_candidate};
    if (a.detail.is_object() && a.detail.contains("move")) {
      n.parent = str(a.detail, "parent");
      n.label = str(a.detail["move"], "text");
      n.proposer = str(a.detail["move"], "proposer");
    } else {
      auto p = d.parent.find(a.candidate_key);
      if (p != d.parent.end()) n.parent = p->second;
      n.label = a.kind + " " + a.strategy;
      n.proposer = str(a.detail, "kind");
    }
    nodes.push_back(std::move(n));
  }
  return nodes;
}

std::vector<CurvePoint> curve_of(const ReportData& d) {
  std::vector<CurvePoint> points;
  for (const AttemptRecord& a : d.attempts) {
    if (a.evaluation_key.empty() || a.kind == "final") continue;
    points.push_back({.evaluation = static_cast<int>(points.size()) + 1,
                      .median_s = a.verdict == "ok" ? a.median_s : 0});
  }
  return points;
}

namespace {

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #263238; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.sub { color: #607d8b; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { border: 1px solid #cfd8dc; border-radius: 6px; padding: 8px 14px; min-width: 130px; }
.card b { display: block; font-size: 20px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceff1; vertical-align: top; }
td.r, th.r { text-align: right; white-space: nowrap; }
tr:target { background: #fff8e1; }
.ok { color: #2e7d32; } .bad { fill: #c62828; color: #c62828; }
.scroll { overflow: auto; max-height: 640px; border: 1px solid #eceff1; }
svg text { font: 12px system-ui, sans-serif; fill: #37474f; } svg .ax { fill: #607d8b; font-size: 11px; }
svg .t { fill: #78909c; }
pre.code { background: #fafafa; border: 1px solid #eceff1; padding: 12px; overflow: auto;
  font: 12.5px/1.4 ui-monospace, monospace; }
.code .k { color: #6a1b9a; } .code .c { color: #78909c; font-style: italic; }
.code .s { color: #2e7d32; } .code .n { color: #ad1457; } .code .p { color: #00838f; }
)";

std::string header_html(const ReportData& d) {
  const RunRecord& r = d.run;
  std::string h = fmt::format("<h1>kforge {} run {} on {}</h1>\n", html_escape(r.mode),
                              html_escape(r.id), html_escape(r.task_name));
  h += fmt::format("<div class=\"sub\">brain {} · {} · created {} · updated {}{}</div>\n",
                   html_escape(r.brain), html_escape(r.state), html_escape(r.created_at),
                   html_escape(r.updated_at),
                   str(r.summary, "stop_reason").empty()
                       ? ""
                       : " · stopped: " + html_escape(str(r.summary, "stop_reason")));
  const nlohmann::json& s = r.summary;
  const nlohmann::json best = s.is_object() ? s.value("best", nlohmann::json()) : nlohmann::json();
  const nlohmann::json fin = s.is_object() ? s.value("final", nlohmann::json()) : nlohmann::json();
  const nlohmann::json vr =
      fin.is_object() ? fin.value("vs_reference", nlohmann::json()) : nlohmann::json();
  const nlohmann::json vb =
      fin.is_object() ? fin.value("vs_baseline", nlohmann::json()) : nlohmann::json();
  const auto card = [](const std::string& name, const std::string& value, const std::string& note) {
    return fmt::format("<div class=\"card\">{}<b>{}</b><span class=\"sub\">{}</span></div>",
                       html_escape(name), html_escape(value), html_escape(note));
  };
  h += "<div class=\"cards\">";
  h += card("best (search)", ms(num(best, "median_s")), str(best, "recipe"));
  if (fin.is_object()) {
    h += card("final run", ms(num(fin, "median_s")),
              str(fin, "verdict") + ", min " + ms(num(fin, "min_s")));
    h += card("vs the reference", ratio(num(vr, "median")), "min " + ratio(num(vr, "min")));
    h += card("vs the library", ratio(num(vb, "median")),
              num(vb, "median") > 0 ? "min " + ratio(num(vb, "min")) : "no library baseline");
    h += card("of the roofline", percent(num(fin, "roofline_fraction")),
              str(fin, "bound") + "-bound");
  }
  const int borrowed = s.is_object() ? s.value("borrowed_evaluations", 0) : 0;
  h += card("evaluations", std::to_string(s.is_object() ? s.value("evaluations", 0) : 0),
            std::to_string(d.attempts.size()) + " attempts" +
                (borrowed > 0 ? fmt::format(", {} read back free", borrowed) : ""));
  return h + "</div>\n";
}

std::string journey_html(const ReportData& d) {
  std::string t =
      "<div class=\"scroll\"><table><tr><th class=r>#</th><th>kind</th><th>strategy</th>"
      "<th>candidate</th><th>verdict</th><th class=r>median</th><th class=r>ref</th>"
      "<th class=r>lib</th><th class=r>roof</th><th>message</th></tr>\n";
  for (const AttemptRecord& a : d.attempts) {
    std::string message = str(a.detail, "message");
    if (message.size() > 300) message = message.substr(0, 300) + "...";
    t += fmt::format(
        "<tr id=\"a{}\"><td class=r>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{}\">{}"
        "</td><td class=r>{}</td><td class=r>{}</td><td class=r>{}</td><td class=r>{}</td>"
        "<td>{}</td></tr>\n",
        a.seq, a.seq, html_escape(a.kind), html_escape(a.strategy),
        html_escape(str(a.detail, "recipe").empty() ? str(a.detail, "origin")
                                                    : str(a.detail, "recipe")),
        a.verdict == "ok" ? "ok" : "bad", html_escape(a.verdict), ms(a.median_s),
        ratio(num(a.detail, "vs_reference")), ratio(num(a.detail, "vs_library")),
        percent(num(a.detail, "roofline_fraction")), html_escape(message));
  }
  return t + "</table></div>\n";
}

std::string reasons_html(const ReportData& d) {
  std::string t;
  for (const MessageRecord& m : d.messages) {
    if (m.type != "Plan" || str(m.body, "why").empty()) continue;
    t += fmt::format("<li><b>{}</b>: {}</li>\n", html_escape(str(m.body, "strategy")),
                     html_escape(str(m.body, "why")));
  }
  return t.empty() ? "" : "<h2>The planner's reasons</h2>\n<ul>\n" + t + "</ul>\n";
}

std::string machine_html(const ReportData& d) {
  std::string t = "<h2>The machine</h2>\n";
  if (!d.machine) {
    return t + fmt::format(
                   "<p>fingerprint {} (no probe of it on the machine that wrote this report)</p>\n",
                   html_escape(d.machine_id.empty() ? "unknown" : d.machine_id));
  }
  const MachineInfo& m = *d.machine;
  return t + fmt::format(
                 "<p>{}, {} cores, L1d {} KiB, L2 {} KiB, L3 {} MiB; fp32 peak {:.0f} GFLOP/s "
                 "(1 thread) / {:.0f} (all), DRAM {:.1f} / {:.1f} GB/s; {}; fingerprint {}, "
                 "probed {}</p>\n<p class=\"sub\">ISA: {}</p>\n",
                 html_escape(m.cpu_model), m.cores, m.l1d_bytes >> 10, m.l2_bytes >> 10,
                 m.l3_bytes >> 20, m.peak_gflops_1t, m.peak_gflops_all, m.dram_gbps_1t,
                 m.dram_gbps_all, html_escape(m.cxx_version), html_escape(m.fingerprint),
                 html_escape(m.probed_at), html_escape(fmt::format("{}", fmt::join(m.isa, " "))));
}

}  // namespace

Expected<ReportData> load_report(Store& store, const std::string& run_id) {
  ReportData d;
  auto run = find_run(store, run_id);
  if (!run) return run.error();
  d.run = std::move(*run);
  auto attempts = store.attempts(d.run.id);
  if (!attempts) return attempts.error();
  d.attempts = std::move(*attempts);
  auto messages = store.messages(d.run.id);
  if (!messages) return messages.error();
  d.messages = std::move(*messages);
  for (const AttemptRecord& a : d.attempts) {
    if (a.candidate_key.empty() || d.parent.contains(a.candidate_key)) continue;
    auto c = store.get_candidate(a.candidate_key);
    if (!c) return c.error();
    if (*c) d.parent[a.candidate_key] = str((*c)->provenance, "parent");
    if (d.machine_id.empty() && !a.evaluation_key.empty()) {
      auto e = store.find_evaluation(a.evaluation_key);
      if (!e) return e.error();
      if (*e) d.machine_id = (*e)->machine;
    }
  }
  if (!d.run.best_candidate.empty()) {
    auto b = store.get_candidate(d.run.best_candidate);
    if (!b) return b.error();
    d.best = std::move(*b);
  }
  if (!d.machine_id.empty()) {
    if (auto text = read_file(machine_cache_file(d.machine_id)); text) {
      auto j = nlohmann::json::parse(*text, nullptr, false);
      if (auto m = MachineInfo::from_json(j); m) d.machine = std::move(*m);
    }
  }
  return d;
}

std::string report_html(const ReportData& d) {
  const auto [reference_s, library_s] = anchors(d);
  std::string page = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  page += fmt::format("<title>kforge {} {}</title>\n", html_escape(d.run.task_name),
                      html_escape(d.run.id));
  // No script and nothing fetched: the page is complete as written.
  page +=
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; img-src data:\">\n";
  page += "<style>" + std::string(kStyle) + "</style></head><body>\n";
  page += header_html(d);
  page += "<h2>Best median so far over evaluations</h2>\n" +
          curve_svg(curve_of(d), reference_s, library_s);
  page +=
      "<h2>The graph</h2>\n<p class=\"sub\">Each candidate under the one it was made from; "
      "the run's best ringed (a search keeps the lowest minimum time, so it may differ from the "
      "curve's lowest median). A node links to its attempt below.</p>\n<div class=\"scroll\">" +
      tree_svg(graph_of(d)) + "</div>\n";
  page += "<h2>The journey</h2>\n" + journey_html(d);
  page += reasons_html(d);
  if (d.best) {
    page += fmt::format("<h2>The best kernel</h2>\n<p class=\"sub\">candidate {} · {}</p>\n",
                        html_escape(d.best->key), html_escape(str(d.best->provenance, "origin")));
    page += "<pre class=\"code\">" + highlight_cpp(d.best->source) + "</pre>\n";
  }
  page += machine_html(d);
  page += "<p class=\"sub\">Written by kforge report from the run store.</p>\n</body></html>\n";
  return page;
}

}  // namespace kf::report
