#include "modes/optimize_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "support/json_text.h"

namespace kf {

nlohmann::json optimize_summary(const Task& task, const OptimizeOptions& o, const OptimizeResult& r,
                                double naive_median_s, const std::vector<nlohmann::json>& journey) {
  nlohmann::json s;
  s["run"] = r.run_id;
  s["task"] = task.name;
  s["task_dir"] = o.task_dir.string();
  s["threads"] = o.threads;
  s["brain"] = o.brain;
  s["evaluations"] = r.evaluations;
  s["attempts"] = r.attempts;
  s["reused_evaluations"] = r.reused;
  s["borrowed_evaluations"] = r.borrowed;
  s["stop_reason"] = r.stop_reason;
  s["naive_median_s"] = naive_median_s;
  s["first_candidate"] = r.first_label;
  const double best = r.best_result.timing ? r.best_result.timing->median_s : 0;
  s["best"] = {
      {"key", r.best.key},
      {"kind", agents::source_kind_name(r.best.kind)},
      {"origin", r.best.origin},
      {"recipe", r.best.describe()},
      {"recipe_steps", r.best.generated ? r.best.generated->recipe.to_json() : nlohmann::json()},
      {"schedule", r.best.generated ? r.best.generated->schedule : ""},
      {"median_s", best},
      {"speedup_vs_naive", best > 0 ? naive_median_s / best : 0.0},
      {"roofline_fraction", r.best_result.roofline ? r.best_result.roofline->fraction : 0.0}};
  if (r.final_result) {
    const RunResult& f = *r.final_result;
    s["final"] = {
        {"verdict", verdict_name(f.verdict)},
        {"median_s", f.timing ? f.timing->median_s : 0.0},
        {"min_s", f.timing ? f.timing->min_s : 0.0},
        {"vs_reference", {{"median", f.vs_reference.median}, {"min", f.vs_reference.min}}},
        {"vs_baseline", {{"median", f.vs_baseline.median}, {"min", f.vs_baseline.min}}},
        {"baseline", f.baseline_name},
        {"gflops", f.roofline ? f.roofline->gflops : 0.0},
        {"gbps", f.roofline ? f.roofline->gbps : 0.0},
        {"roofline_fraction", f.roofline ? f.roofline->fraction : 0.0},
        {"bound", f.roofline ? f.roofline->bound : ""},
        {"checks", f.checks.size()},
        {"worst_error_ratio", std::max(f.worst_error_ratio(), r.best_result.worst_error_ratio())}};
  }
  if (!r.final_failures.empty()) s["final_failures"] = r.final_failures;
  s["journey"] = journey;
  return s;
}

std::string optimize_summary_text(const nlohmann::json& s) {
  std::string t = fmt::format("kforge {}: run {} on {} ({} thread(s), brain {})\n",
                              s.value("mode", "optimize"), s.value("run", ""), s.value("task", ""),
                              s.value("threads", 1), s.value("brain", ""));
  t += fmt::format("{} evaluations ({} read back from the store){}, {} attempts; stopped: {}\n",
                   s.value("evaluations", 0), s.value("reused_evaluations", 0),
                   s.value("borrowed_evaluations", 0) > 0
                       ? fmt::format(", {} more read back from earlier runs at no cost to the "
                                     "budget",
                                     s.value("borrowed_evaluations", 0))
                       : "",
                   s.value("attempts", 0), s.value("stop_reason", ""));
  // An attempt's speedup over the reference (modes/run_log.h, "Anchors"), 0 when unknown.
  const auto vs_reference = [](const nlohmann::json& a) {
    return a.contains("detail") && a["detail"].is_object() ? a["detail"].value("vs_reference", 0.0)
                                                           : 0.0;
  };
  const auto& b = s["best"];
  double best_vs_reference = 0;
  t += fmt::format("\njourney:\n  {:>3} {:<9} {:<22} {:<15} {:>12} {:>8}\n", "", "kind", "strategy",
                   "verdict", "median", "ref");
  for (const auto& a : s["journey"]) {
    const std::string detail = a.contains("detail") && a["detail"].is_object()
                                   ? a["detail"].value("recipe", a["detail"].value("message", ""))
                                   : "";
    const double median = a.value("median_s", 0.0), vs = vs_reference(a);
    if (a.value("kind", "") != "final" && a.value("candidate_key", "") == b.value("key", "") &&
        median == b.value("median_s", 0.0))
      best_vs_reference = vs;
    t += fmt::format("  {:>3} {:<9} {:<22} {:<15} {:>12} {:>8}  {}\n", a.value("seq", 0),
                     a.value("kind", ""), column_text(a.value("strategy", ""), 22),
                     a.value("verdict", ""),
                     median > 0 ? fmt::format("{:.3f} ms", 1e3 * median) : "-",
                     vs > 0 ? fmt::format("{:.2f}x", vs) : "-", detail);
  }
  for (const auto& x : s.value("final_failures", nlohmann::json::array()))
    t += fmt::format(
        "\nfailed the final run on fresh inputs, replaced by the next fastest: {} ({}: {})",
        x.value("recipe", ""), x.value("verdict", ""), x.value("message", ""));
  if (s.contains("final_failures")) t += "\n";
  const double vs_naive = b.value("speedup_vs_naive", 0.0);
  const std::string first = s.value("first_candidate", "default schedule");
  t += fmt::format(
      "\nbest: {}\n  {:.3f} ms median, {}{}, {:.0f}% of the roofline\n", b.value("recipe", ""),
      1e3 * b.value("median_s", 0.0),
      best_vs_reference > 0 ? fmt::format("{:.2f}x the reference, ", best_vs_reference) : "",
      vs_naive > 0 ? fmt::format("{:.2f}x the first candidate ({})", vs_naive, first)
                   : fmt::format("the first candidate ({}) ran past the time limit", first),
      100 * b.value("roofline_fraction", 0.0));
  if (s.contains("final")) {
    const auto& f = s["final"];
    t += fmt::format(
        "final side-by-side run: {} {:.3f} ms median ({:.3f} min), {:.1f} GFLOP/s, {:.1f} GB/s, "
        "{:.0f}% of the {} roofline\n  speedup over the reference: {:.2f}x median, {:.2f}x min\n",
        f.value("verdict", ""), 1e3 * f.value("median_s", 0.0), 1e3 * f.value("min_s", 0.0),
        f.value("gflops", 0.0), f.value("gbps", 0.0), 100 * f.value("roofline_fraction", 0.0),
        f.value("bound", ""), f["vs_reference"].value("median", 0.0),
        f["vs_reference"].value("min", 0.0));
    if (f["vs_baseline"].value("median", 0.0) > 0)
      t += fmt::format("  speedup over the library baseline ({}): {:.2f}x median, {:.2f}x min\n",
                       f.value("baseline", ""), f["vs_baseline"].value("median", 0.0),
                       f["vs_baseline"].value("min", 0.0));
    if (const double ratio = f.value("worst_error_ratio", 0.0); ratio > 0)
      t += fmt::format("  correctness: worst element at {:.2f} of its tolerance bound{}\n", ratio,
                       ratio > 0.5 ? " (a thin margin: other input seeds may fail it)" : "");
  }
  return t;
}

Status write_optimize_outputs(const Task& task, const OptimizeResult& r) {
  std::error_code ec;
  std::filesystem::create_directories(r.out_dir, ec);
  if (ec) return Status::error("cannot create " + r.out_dir.string() + ": " + ec.message());
  auto write = [&](const std::string& name, const std::string& text) -> Status {
    std::ofstream f(r.out_dir / name);
    f << text;
    if (!f) return Status::error("cannot write " + (r.out_dir / name).string());
    return {};
  };
  KF_RETURN_IF_ERROR(write("best.cpp", r.best.source));
  // The schedule of a generated best; written source has none.
  if (r.best.generated)
    KF_RETURN_IF_ERROR(write("best.sched", "# " + task.name + ": " + r.best.describe() + "\n" +
                                               r.best.generated->schedule));
  KF_RETURN_IF_ERROR(write("summary.json", dump_json(r.summary, 2) + "\n"));
  return write("summary.txt", optimize_summary_text(r.summary));
}

void summarize_run(OptimizeResult& r, const Task& task, const std::filesystem::path& task_dir,
                   int threads, const std::string& brain, const RunLog& log) {
  r.evaluations = log.evaluations();
  r.attempts = log.attempts();
  r.reused = log.reused();
  r.borrowed = log.borrowed();
  OptimizeOptions as_run;
  as_run.task_dir = task_dir;
  as_run.threads = threads;
  as_run.brain = brain;
  r.summary = optimize_summary(task, as_run, r, log.reference_median(), log.journey());
}

}  // namespace kf
