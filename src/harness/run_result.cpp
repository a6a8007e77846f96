#include "harness/run_result.h"

namespace kf {

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::ok: return "ok";
    case Verdict::compile_error: return "compile_error";
    case Verdict::crash: return "crash";
    case Verdict::timeout: return "timeout";
    case Verdict::wrong_answer: return "wrong_answer";
    case Verdict::memory_limit: return "memory_limit";
    case Verdict::forbidden: return "forbidden";
    case Verdict::suspicious: return "suspicious";
  }
  return "?";
}

std::optional<Verdict> parse_verdict(std::string_view s) {
  for (Verdict v : {Verdict::ok, Verdict::compile_error, Verdict::crash, Verdict::timeout,
                    Verdict::wrong_answer, Verdict::memory_limit, Verdict::forbidden,
                    Verdict::suspicious})
    if (verdict_name(v) == s) return v;
  return std::nullopt;
}

namespace {

nlohmann::json timing_json(const Timing& t) {
  return {{"samples", t.samples},     {"reps_per_sample", t.reps_per_sample},
          {"sets", t.sets},           {"min_s", t.min_s},
          {"median_s", t.median_s},   {"mean_s", t.mean_s},
          {"max_s", t.max_s},         {"spread", t.spread},
          {"overhead_s", t.overhead_s}, {"per_run_s", t.per_run_s}};
}

}  // namespace

nlohmann::json RunResult::to_json() const {
  nlohmann::json j;
  j["verdict"] = verdict_name(verdict);
  j["message"] = message;
  j["diagnostics"] = diagnostics;
  j["task"] = task;
  j["shape"] = shape;
  j["threads"] = threads;
  j["machine"] = machine;
  nlohmann::json c = {{"ok", compile.ok},         {"cached", compile.cached},
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
                           {"worst", k.worst},
                           {"detail", k.detail}});
  if (timing) j["timing"] = timing_json(*timing);
  if (reference_timing) j["reference_timing"] = timing_json(*reference_timing);
  if (baseline_timing) {
    j["baseline_timing"] = timing_json(*baseline_timing);
    j["baseline"] = baseline_name;
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
                     {"context_switches_per_call", counters->context_switches_per_call}};
  if (vs_reference.median > 0)
    j["speedup"] = {{"median", vs_reference.median}, {"min", vs_reference.min}};
  if (vs_baseline.median > 0)
    j["speedup_vs_baseline"] = {{"median", vs_baseline.median}, {"min", vs_baseline.min}};
  j["output_log"] = output_log;
  return j;
}

}  // namespace kf
