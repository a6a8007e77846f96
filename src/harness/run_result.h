// RunResult: everything the judge says about one evaluation. Verdicts are data (DESIGN.md):
// a failing candidate is recorded and the search goes on.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"

namespace kf {

enum class Verdict {
  ok,
  compile_error,
  crash,
  timeout,
  wrong_answer,
  memory_limit,
  forbidden,
  suspicious,
};

std::string_view verdict_name(Verdict v);
std::optional<Verdict> parse_verdict(std::string_view s);

// One compiler message.
struct Diagnostic {
  std::string file;
  int line = 0, column = 0;
  std::string severity;  // error, warning, note
  std::string message;
};

struct CompileInfo {
  bool ok = false;
  bool cached = false;
  double seconds = 0;
  std::string key;      // content hash: source + flags + compiler + target
  std::string command;  // the compiler invocation
  std::string log;      // raw compiler output (capped)
  std::vector<Diagnostic> diagnostics;
};

// One correctness check: one shape, one seed.
struct CheckRecord {
  std::string shape;  // "M=17 N=33 K=9"
  uint64_t seed = 0;
  bool passed = false;
  bool timed = false;  // the output of a timed run at the bench shape
  double rel_l2 = 0, max_abs_err = 0;
  // The worst element's |error| / its bound (atol + rtol |y*|): 1 is at the bound. A pass near 1
  // is a thin margin: another input seed may fail it.
  double worst_ratio = 0;
  std::string worst;   // "C[3, 7]: got 1.5, expected 1.25"
  std::string detail;  // the first failure, when !passed
};

struct Timing {
  int samples = 0, reps_per_sample = 0, sets = 0;
  double min_s = 0, median_s = 0, mean_s = 0, max_s = 0;
  double spread = 0;              // (p90 - p10) / median
  double overhead_s = 0;          // protocol round trip subtracted from each sample
  std::vector<double> per_run_s;  // every sample, per kernel call
  // Why timing ended before its minimum time and samples, empty when it ran its course: a
  // kernel too slow for the wall-clock cap, or one clearly slower than the time it had to beat.
  std::string stopped_early;
};

// Software counters over the timed calls, per call (the machine has no hardware counters).
struct Counters {
  double cpus_busy = 0;  // CPU time / wall time: how many threads actually ran
  double cpu_s_per_call = 0;
  double minor_faults_per_call = 0, major_faults_per_call = 0;
  double context_switches_per_call = 0;
  // CPU time the worker used between its timed batches, while it was stopped (0 unless work
  // escaped the stop).
  double cpu_s_while_stopped = 0;
  // CPU time in the timed calls that threads beyond the grant did (0 for a kernel within it).
  double cpu_s_beyond_grant = 0;
};

struct Roofline {
  double flops = 0, bytes = 0;
  double gflops = 0, gbps = 0;            // achieved, from the median time
  double peak_gflops = 0, peak_gbps = 0;  // machine ceilings at this thread count
  double attainable_gflops = 0;           // min(peak, intensity * bandwidth)
  double fraction = 0;                    // achieved / attainable
  double min_time_s = 0;                  // the fastest time the ceilings allow
  std::string bound;                      // "compute" or "memory"
};

// How much faster the candidate is than another solution timed in the same run.
struct Speedup {
  double median = 0, min = 0;  // other's median / candidate's median; other's min / candidate's min
};

struct RunResult {
  Verdict verdict = Verdict::ok;
  std::string message;                   // one line: what happened
  std::vector<std::string> diagnostics;  // details a person or an agent can act on
  CompileInfo compile;
  std::vector<CheckRecord> checks;
  std::optional<Timing> timing, reference_timing, baseline_timing, rival_timing;
  std::optional<Roofline> roofline;
  std::optional<Counters> counters;
  Speedup vs_reference, vs_baseline, vs_rival;  // zero when that solution was not timed
  std::string baseline_name, rival_name;
  std::string task, shape, machine;
  int threads = 1;
  std::string output_log;  // what the candidate printed (capped; never trusted)

  // The largest worst_ratio over the passed checks (0 when none passed).
  double worst_error_ratio() const;
  nlohmann::json to_json() const;
  // The inverse of to_json (for results read back from the store or a recording). Fails naming
  // the first missing or mistyped field.
  static Expected<RunResult> from_json(const nlohmann::json& j);
};

}  // namespace kf
