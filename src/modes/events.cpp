#include "modes/events.h"

#include <fmt/format.h>

#include <chrono>

#include "agents/acceptance.h"
#include "support/json_text.h"

namespace kf {
namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};

nlohmann::json body(const RunStarted& e) {
  return {{"run", e.run_id},
          {"task", e.task},
          {"mode", e.mode},
          {"brain", e.brain},
          {"target", e.target},
          {"threads", e.threads},
          {"budget_evals", e.budget_evals},
          {"budget_time_s", e.budget_time_s},
          {"resumed", e.resumed}};
}

nlohmann::json body(const AttemptJudged& e) {
  nlohmann::json j = {{"run", e.run_id},
                      {"seq", e.seq},
                      {"evaluation", e.evaluation},
                      {"budget_evals", e.budget_evals},
                      {"kind", e.kind},
                      {"strategy", e.strategy},
                      {"label", e.label},
                      {"candidate", e.candidate},
                      {"verdict", e.verdict},
                      {"message", e.message},
                      {"reused", e.reused},
                      {"spent", e.spent}};
  if (e.median_s > 0) {
    j["median_s"] = e.median_s;
    j["min_s"] = e.min_s;
  }
  if (e.speedup_vs_naive > 0) j["speedup_vs_naive"] = e.speedup_vs_naive;
  if (e.vs_reference > 0) j["vs_reference"] = e.vs_reference;
  if (e.vs_library > 0) j["vs_library"] = e.vs_library;
  if (e.median_s > 0 && e.spread >= 0) j["spread"] = e.spread;
  if (e.roofline_fraction >= 0) j["roofline_fraction"] = e.roofline_fraction;
  if (e.vs_best_median > 0) j["vs_best"] = {{"median", e.vs_best_median}, {"min", e.vs_best_min}};
  return j;
}

nlohmann::json body(const NewBest& e) {
  return {{"run", e.run_id},  {"candidate", e.candidate},
          {"label", e.label}, {"median_s", e.median_s},
          {"min_s", e.min_s}, {"speedup_vs_naive", e.speedup_vs_naive}};
}

nlohmann::json body(const Note& e) {
  return {{"run", e.run_id}, {"text", e.text}};
}

nlohmann::json body(const RunEnded& e) {
  nlohmann::json j = {{"run", e.run_id},
                      {"stop_reason", e.stop_reason},
                      {"best_candidate", e.best_candidate},
                      {"evaluations", e.evaluations},
                      {"attempts", e.attempts},
                      {"reused", e.reused},
                      {"borrowed", e.borrowed},
                      {"best_median_s", e.best_median_s}};
  if (!e.final_verdict.empty()) j["final_verdict"] = e.final_verdict;
  return j;
}

// A side-by-side run against the best, in words: vs = the best's time over this candidate's.
std::string versus_best(double vs_median, double vs_min) {
  if (vs_median <= 0) return "";
  const auto factor = [](double vs) {
    return vs >= 1 ? fmt::format("{:.2f}x faster", vs) : fmt::format("{:.2f}x slower", 1 / vs);
  };
  // The rule that reads the pair (agents/acceptance.h), so a pair slightly ahead that is not
  // kept does not read as a contradiction.
  return fmt::format(
      "  side by side with the best: {} by median, {} by min (kept at {:.2f}x by both)",
      factor(vs_median), factor(vs_min), agents::acceptance_policy().paired_win);
}

// The columns of an attempt's line; the run's first line names them.
constexpr const char* kColumns = "{} {:<9} {:<34} {:<13} {:>7} {:>7} {:>10} {:>5} {:>6}";

std::string ratio(double x) {
  return x > 0 ? fmt::format("{:.2f}x", x) : "-";
}

// "[  3/12]": evaluations against the budget; "[  3]" in a run without one (a person steers).
std::string counter_text(int evaluation, int budget) {
  return budget > 0 ? fmt::format("[{:>3}/{}]", evaluation, budget)
                    : fmt::format("[{:>3}]", evaluation);
}

std::string attempt_line(const AttemptJudged& a) {
  // The counter stops at the budget: the final run is a measurement of its own, not one more
  // evaluation of the search. Long labels are cut so the columns stay aligned.
  const size_t width = counter_text(a.budget_evals, a.budget_evals).size();
  std::string counter = counter_text(a.evaluation, a.budget_evals);
  if (a.kind == "final") counter = fmt::format("{:<{}}", "[final]", width);
  if (!a.spent)
    counter = a.budget_evals > 0 ? fmt::format("[{:>3}/{}]", "-", a.budget_evals)
                                 : fmt::format("[{:>3}]", "-");
  std::string note;
  if (a.reused) note = a.spent ? "  (stored)" : "  (an earlier run's measurement: no budget spent)";
  const bool timed = a.median_s > 0;
  return fmt::format(
             fmt::runtime(kColumns), counter, a.kind, column_text(a.label, 34), a.verdict,
             ratio(a.vs_reference), ratio(a.vs_library),
             timed ? fmt::format("{:.3f} ms", a.median_s * 1e3) : "-",
             a.roofline_fraction >= 0 ? fmt::format("{:.0f}%", 100 * a.roofline_fraction) : "-",
             timed && a.spread >= 0 ? fmt::format("{:.0f}%", 100 * a.spread) : "-") +
         versus_best(a.vs_best_median, a.vs_best_min) + note;
}

std::string started_lines(const RunStarted& s) {
  const std::string counter(counter_text(s.budget_evals, s.budget_evals).size(), ' ');
  const std::string budget = s.budget_evals > 0 ? fmt::format("budget {} evaluations / {:.0f} s",
                                                              s.budget_evals, s.budget_time_s)
                                                : "no budget: a person steers";
  return fmt::format("run {} on {} ({} thread{}, {})\n", s.run_id, s.task, s.threads,
                     s.threads == 1 ? "" : "s", budget) +
         fmt::format(fmt::runtime(kColumns), counter, "kind", "candidate", "verdict", "ref", "lib",
                     "median", "roof", "spread");
}

}  // namespace

std::string event_type(const Event& e) {
  return std::visit(
      Overloaded{[](const RunStarted&) { return "run_started"; },
                 [](const AttemptJudged&) { return "attempt_judged"; },
                 [](const NewBest&) { return "new_best"; }, [](const Note&) { return "note"; },
                 [](const RunEnded&) { return "run_ended"; }},
      e);
}

nlohmann::json event_json(const Event& e, double unix_time_s) {
  nlohmann::json j = std::visit([](const auto& x) { return body(x); }, e);
  j["schema"] = kEventsSchema;
  j["type"] = event_type(e);
  j["time"] = unix_time_s;
  return j;
}

std::string console_line(const Event& e) {
  return std::visit(
      Overloaded{[](const RunStarted& s) { return started_lines(s); },
                 [](const AttemptJudged& a) { return attempt_line(a); },
                 [](const NewBest&) { return std::string(); }, [](const Note& n) { return n.text; },
                 [](const RunEnded&) { return std::string(); }},
      e);
}

void ConsoleReporter::on(const Event& e) {
  const std::string line = console_line(e);
  if (!line.empty() && print_) print_(line);
}

JsonLinesReporter::~JsonLinesReporter() {
  if (f_) std::fclose(f_);
}

Status JsonLinesReporter::open(const std::string& path) {
  f_ = std::fopen(path.c_str(), "a");
  if (!f_) return Status::error(fmt::format("cannot open {} for the events", path));
  return {};
}

void JsonLinesReporter::on(const Event& e) {
  if (!f_) return;
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string line = dump_json(event_json(e, now)) + "\n";
  if (std::fwrite(line.data(), 1, line.size(), f_) != line.size() || std::fflush(f_) != 0) {
    if (status_.ok()) status_ = Status::error("writing the events file failed");
  }
}

}  // namespace kf
