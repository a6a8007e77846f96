#include "harness/run_result.h"

#include <algorithm>
#include <cmath>

namespace kf {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ok:
      return "ok";
    case Verdict::compile_error:
      return "compile_error";
    case Verdict::crash:
      return "crash";
    case Verdict::timeout:
      return "timeout";
    case Verdict::wrong_answer:
      return "wrong_answer";
    case Verdict::memory_limit:
      return "memory_limit";
    case Verdict::forbidden:
      return "forbidden";
    case Verdict::suspicious:
      return "suspicious";
  }
  return "?";
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (Verdict v :
       {Verdict::ok, Verdict::compile_error, Verdict::crash, Verdict::timeout,
        Verdict::wrong_answer, Verdict::memory_limit, Verdict::forbidden, Verdict::suspicious})
    if (verdict_name(v) == s) return v;
  return std::nullopt;
}

namespace {

nlohmann::json timing_json(const Timing& t) {
  return {{"samples", t.samples},
          {"reps_per_sample", t.reps_per_sample},
          {"sets", t.sets},
          {"min_s", t.min_s},
          {"median_s", t.median_s},
          {"mean_s", t.mean_s},
          {"max_s", t.max_s},
          {"spread", t.spread},
          {"overhead_s", t.overhead_s},
          {"per_run_s", t.per_run_s},
          {"stopped_early", t.stopped_early}};
}

}  // namespace

double RunResult::worst_error_ratio() const {
  double worst = 0;
  for (const CheckRecord& c : checks)
    if (c.passed) worst = std::max(worst, c.worst_ratio);
  return worst;
}

nlohmann::json RunResult::to_json() const {
  nlohmann::json j;
  j["verdict"] = verdict_name(verdict);
  j["message"] = message;
  j["diagnostics"] = diagnostics;
  j["task"] = task;
  j["shape"] = shape;
  j["threads"] = threads;
  j["machine"] = machine;
  nlohmann::json c = {{"ok", compile.ok},           {"cached", compile.cached},
                      {"seconds", compile.seconds}, {"key", compile.key},
                      {"command", compile.command}, {"log", compile.log}};
  c["diagnostics"] = nlohmann::json::array();
  for (const auto& d : compile.diagnostics)
    c["diagnostics"].push_back({{"file", d.file},
                                {"line", d.line},
                                {"column", d.column},
                                {"severity", d.severity},
                                {"message", d.message}});
  j["compile"] = c;
  j["checks"] = nlohmann::json::array();
  for (const auto& k : checks)
    j["checks"].push_back({{"shape", k.shape},
                           {"seed", k.seed},
                           {"passed", k.passed},
                           {"timed", k.timed},
                           {"rel_l2", k.rel_l2},
                           {"max_abs_err", k.max_abs_err},
                           {"worst_ratio", std::isfinite(k.worst_ratio) ? k.worst_ratio : 1e300},
                           {"worst", k.worst},
                           {"detail", k.detail}});
  if (timing) j["timing"] = timing_json(*timing);
  if (reference_timing) j["reference_timing"] = timing_json(*reference_timing);
  if (baseline_timing) {
    j["baseline_timing"] = timing_json(*baseline_timing);
    j["baseline"] = baseline_name;
  }
  if (rival_timing) {
    j["rival_timing"] = timing_json(*rival_timing);
    j["rival"] = rival_name;
  }
  if (roofline) {
    const Roofline& r = *roofline;
    j["roofline"] = {{"flops", r.flops},
                     {"bytes", r.bytes},
                     {"gflops", r.gflops},
                     {"gbps", r.gbps},
                     {"peak_gflops", r.peak_gflops},
                     {"peak_gbps", r.peak_gbps},
                     {"attainable_gflops", r.attainable_gflops},
                     {"fraction", r.fraction},
                     {"min_time_s", r.min_time_s},
                     {"bound", r.bound}};
  }
  if (counters)
    j["counters"] = {{"cpus_busy", counters->cpus_busy},
                     {"cpu_s_per_call", counters->cpu_s_per_call},
                     {"minor_faults_per_call", counters->minor_faults_per_call},
                     {"major_faults_per_call", counters->major_faults_per_call},
                     {"context_switches_per_call", counters->context_switches_per_call},
                     {"cpu_s_while_stopped", counters->cpu_s_while_stopped},
                     {"cpu_s_beyond_grant", counters->cpu_s_beyond_grant}};
  if (vs_reference.median > 0)
    j["speedup"] = {{"median", vs_reference.median}, {"min", vs_reference.min}};
  if (vs_baseline.median > 0)
    j["speedup_vs_baseline"] = {{"median", vs_baseline.median}, {"min", vs_baseline.min}};
  if (vs_rival.median > 0)
    j["speedup_vs_rival"] = {{"median", vs_rival.median}, {"min", vs_rival.min}};
  j["output_log"] = output_log;
  return j;
}

namespace {

Timing timing_from(const nlohmann::json& t) {
  Timing r;
  r.samples = t.value("samples", 0);
  r.reps_per_sample = t.value("reps_per_sample", 0);
  r.sets = t.value("sets", 0);
  r.min_s = t.value("min_s", 0.0);
  r.median_s = t.value("median_s", 0.0);
  r.mean_s = t.value("mean_s", 0.0);
  r.max_s = t.value("max_s", 0.0);
  r.spread = t.value("spread", 0.0);
  r.overhead_s = t.value("overhead_s", 0.0);
  r.per_run_s = t.value("per_run_s", std::vector<double>{});
  r.stopped_early = t.value("stopped_early", std::string());
  return r;
}

Speedup speedup_from(const nlohmann::json& j) {
  return {j.value("median", 0.0), j.value("min", 0.0)};
}

}  // namespace

Expected<RunResult> RunResult::from_json(const nlohmann::json& j) {
  if (!j.is_object()) return Status::error("run result: expected a JSON object");
  if (!j.contains("verdict") || !j["verdict"].is_string())
    return Status::error("run result: missing field 'verdict'");
  auto v = parse_verdict(j["verdict"].get<std::string>());
  if (!v)
    return Status::error("run result: unknown verdict '" + j["verdict"].get<std::string>() + "'");
  try {
    RunResult r;
    r.verdict = *v;
    r.message = j.value("message", "");
    r.diagnostics = j.value("diagnostics", std::vector<std::string>{});
    r.task = j.value("task", "");
    r.shape = j.value("shape", "");
    r.threads = j.value("threads", 1);
    r.machine = j.value("machine", "");
    if (j.contains("compile")) {
      const auto& c = j["compile"];
      r.compile.ok = c.value("ok", false);
      r.compile.cached = c.value("cached", false);
      r.compile.seconds = c.value("seconds", 0.0);
      r.compile.key = c.value("key", "");
      r.compile.command = c.value("command", "");
      r.compile.log = c.value("log", "");
      for (const auto& d : c.value("diagnostics", nlohmann::json::array()))
        r.compile.diagnostics.push_back({d.value("file", ""), d.value("line", 0),
                                         d.value("column", 0), d.value("severity", ""),
                                         d.value("message", "")});
    }
    for (const auto& k : j.value("checks", nlohmann::json::array())) {
      CheckRecord c;
      c.shape = k.value("shape", "");
      c.seed = k.value("seed", uint64_t{0});
      c.passed = k.value("passed", false);
      c.timed = k.value("timed", false);
      c.rel_l2 = k.value("rel_l2", 0.0);
      c.max_abs_err = k.value("max_abs_err", 0.0);
      c.worst_ratio = k.value("worst_ratio", 0.0);
      c.worst = k.value("worst", "");
      c.detail = k.value("detail", "");
      r.checks.push_back(c);
    }
    if (j.contains("timing")) r.timing = timing_from(j["timing"]);
    if (j.contains("reference_timing")) r.reference_timing = timing_from(j["reference_timing"]);
    if (j.contains("baseline_timing")) {
      r.baseline_timing = timing_from(j["baseline_timing"]);
      r.baseline_name = j.value("baseline", "");
    }
    if (j.contains("rival_timing")) {
      r.rival_timing = timing_from(j["rival_timing"]);
      r.rival_name = j.value("rival", "");
    }
    if (j.contains("roofline")) {
      const auto& x = j["roofline"];
      Roofline f;
      f.flops = x.value("flops", 0.0);
      f.bytes = x.value("bytes", 0.0);
      f.gflops = x.value("gflops", 0.0);
      f.gbps = x.value("gbps", 0.0);
      f.peak_gflops = x.value("peak_gflops", 0.0);
      f.peak_gbps = x.value("peak_gbps", 0.0);
      f.attainable_gflops = x.value("attainable_gflops", 0.0);
      f.fraction = x.value("fraction", 0.0);
      f.min_time_s = x.value("min_time_s", 0.0);
      f.bound = x.value("bound", "");
      r.roofline = f;
    }
    if (j.contains("counters")) {
      const auto& x = j["counters"];
      r.counters = Counters{x.value("cpus_busy", 0.0),
                            x.value("cpu_s_per_call", 0.0),
                            x.value("minor_faults_per_call", 0.0),
                            x.value("major_faults_per_call", 0.0),
                            x.value("context_switches_per_call", 0.0),
                            x.value("cpu_s_while_stopped", 0.0),
                            x.value("cpu_s_beyond_grant", 0.0)};
    }
    if (j.contains("speedup")) r.vs_reference = speedup_from(j["speedup"]);
    if (j.contains("speedup_vs_baseline")) r.vs_baseline = speedup_from(j["speedup_vs_baseline"]);
    if (j.contains("speedup_vs_rival")) r.vs_rival = speedup_from(j["speedup_vs_rival"]);
    r.output_log = j.value("output_log", "");
    return r;
  } catch (const nlohmann::json::exception& e) {
    return Status::error(std::string("run result: ") + e.what());
  }
}

}  // namespace kf
