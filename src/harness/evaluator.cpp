#include "harness/evaluator.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

#include "harness/evaluator_judge.h"
#include "harness/sandbox.h"
#include "harness/shim.h"
#include "support/fs.h"

namespace kf {

Expected<RunResult> evaluate(const Task& task, const std::string& candidate_source,
                             const EvalOptions& o) {
  RunResult res;
  res.task = task.name;
  res.threads = o.threads;
  if (o.machine) res.machine = o.machine->fingerprint;
  std::shared_ptr<const te::Program> program = o.program;
  if (!program && !task.te_spec.empty()) {
    auto p = te::compile_spec(task);
    if (!p) return Status::error("the task's TE spec: " + p.error().message());
    program = std::make_shared<const te::Program>(std::move(*p));
  }
  Judge judge(task, o, res, program.get());
  const Backend& backend = o.backend ? *o.backend : cpu_backend();
  const Backend& host = cpu_backend();

  judge.note("compiling the candidate");
  CompiledObject cand =
      backend.compile(candidate_source, entry_shim(task, ShimKind::candidate), o.compile);
  res.compile = cand.info;
  if (!cand.info.ok) {
    std::vector<std::string> diags;
    bool in_shim = false;
    for (const auto& d : cand.info.diagnostics)
      if (d.severity == "error") {
        in_shim |= d.file == "kforge_entry.cpp";
        diags.push_back(
            d.line ? fmt::format("{}:{}:{}: error: {}", d.file, d.line, d.column, d.message)
                   : d.message);
      }
    if (diags.empty()) diags.push_back(cand.info.log.substr(0, 2000));
    if (in_shim)
      diags.push_back(
          fmt::format("the judge's entry shim could not call the candidate: it must "
                      "define `{}`",
                      candidate_signature(task)));
    judge.fail(Verdict::compile_error, "compilation failed: " + diags.front(), diags);
    return res;
  }
  if (!cand.interposed_symbols.empty()) {
    std::string names;
    for (const auto& s : cand.interposed_symbols) names += (names.empty() ? "" : ", ") + s;
    judge.fail(Verdict::forbidden,
               fmt::format("the candidate defines C-library functions: {}", names),
               {"a kernel may not define functions that would replace the C library's (clocks, "
                "process control): the judge's timing must not be tampered with"});
    return res;
  }
  CompileOptions ref_opts = o.compile;
  ref_opts.extra_flags.clear();
  CompiledObject oracle =
      host.compile(task.reference_source, entry_shim(task, ShimKind::oracle), ref_opts);
  if (!oracle.info.ok)
    return Status::error(fmt::format("{}/reference.cpp does not compile as the f64 oracle:\n{}",
                                     task.dir.string(), oracle.info.log));
  std::optional<Solution> reference;
  if (o.time && o.time_reference) {
    CompiledObject ref =
        host.compile(task.reference_source, entry_shim(task, ShimKind::reference), ref_opts);
    if (!ref.info.ok)
      return Status::error(fmt::format("{}/reference.cpp does not compile at {}:\n{}",
                                       task.dir.string(), dtype_name(task.dtype), ref.info.log));
    reference = Solution{ref.so_path, ShimKind::reference};
  }
  std::optional<Solution> baseline;
  if (o.time && o.time_baseline && task.baseline) {
    auto src = read_file(task.dir / task.baseline->file);
    if (!src) return src.error();
    CompileOptions bl_opts = ref_opts;
    bl_opts.libs = task.baseline->libs;
    CompiledObject bl = host.compile(*src, entry_shim(task, ShimKind::candidate), bl_opts);
    if (!bl.info.ok)
      return Status::error(
          fmt::format("{} does not compile:\n{}", task.baseline->file, bl.info.log));
    baseline = Solution{bl.so_path, ShimKind::candidate};
    res.baseline_name = task.baseline->name;
  }
  std::optional<Solution> rival;
  if (o.time && !o.rival_source.empty()) {
    CompiledObject rv =
        backend.compile(o.rival_source, entry_shim(task, ShimKind::candidate), o.compile);
    if (!rv.info.ok)
      return Status::error(
          fmt::format("the rival ({}) does not compile:\n{}", o.rival_name, rv.info.log));
    rival = Solution{rv.so_path, ShimKind::candidate, &backend};
    res.rival_name = o.rival_name;
  }
  const Solution cand_s{cand.so_path, ShimKind::candidate, &backend};
  const Solution oracle_s{oracle.so_path, ShimKind::oracle, &cpu_backend(), oracle.info.key};

  auto tests_ok = judge.check_test_shapes(cand_s, oracle_s);
  if (!tests_ok) return tests_ok.error();
  if (!*tests_ok) return res;
  if (o.time) {
    auto bench_ok = judge.bench(cand_s, oracle_s, reference, baseline, rival);
    if (!bench_ok) return bench_ok.error();
    if (!*bench_ok) return res;
  }
  res.verdict = Verdict::ok;
  res.message =
      o.time ? fmt::format("correct on {} test shapes and the bench shape", task.tests.size())
             : fmt::format("correct on {} test shapes (not timed)", task.tests.size());
  return res;
}

Expected<std::vector<double>> time_stages(const Task& task, const std::string& instrumented_source,
                                          int calls, const EvalOptions& o) {
  if (calls < 1) return Status::error("time_stages: calls must be at least 1");
  const Backend& backend = o.backend ? *o.backend : cpu_backend();
  CompiledObject so =
      backend.compile(instrumented_source, entry_shim(task, ShimKind::candidate), o.compile);
  if (!so.info.ok)
    return Status::error("the instrumented build does not compile: " + so.info.log.substr(0, 500));
  auto inst = task.instantiate(task.bench);
  if (!inst) return inst.error();
  auto w = start_worker(task, *inst, Solution{so.so_path, ShimKind::candidate, &backend}, 1, o);
  if (!w) return w.error();
  if (auto* f = (*w)->fault()) return Status::error("the instrumented build " + f->message);
  KF_RETURN_IF_ERROR(fill_inputs(task, *inst, **w, 0, o.seed ? o.seed : 0x5eedull));
  RunOutcome warm = (*w)->run(0, 1, o.run_timeout_s);
  if (!warm.ok) return Status::error("the instrumented build: " + warm.message);
  auto last = (*w)->stage_times();
  if (!last) return last.error();
  // Per call, then the median of each stage: one call slowed by the machine's other work (a
  // shared VM) moves a sum over all calls, not a median.
  std::vector<std::vector<double>> per_stage(last->size());
  for (int c = 0; c < calls; ++c) {
    RunOutcome run = (*w)->run(0, 1, o.run_timeout_s);
    if (!run.ok) return Status::error("the instrumented build: " + run.message);
    auto now = (*w)->stage_times();
    if (!now) return now.error();
    for (size_t i = 0; i < per_stage.size() && i < now->size(); ++i)
      per_stage[i].push_back(static_cast<double>((*now)[i] - (*last)[i]) * 1e-9);
    last = std::move(now);
  }
  std::vector<double> seconds;
  for (auto& v : per_stage) {
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    seconds.push_back(v[v.size() / 2]);
  }
  return seconds;
}

MachineLimits machine_limits(const MachineInfo& m, int threads) {
  return MachineLimits{.peak_gflops = m.peak_gflops(threads),
                       .dram_gbps = m.dram_gbps(threads),
                       .cache_gbps = m.cache_gbps_1t * threads,
                       .fingerprint = m.fingerprint};
}

std::function<std::optional<MachineLimits>()> remeasure_machine(int threads,
                                                                const std::string& cxx) {
  return [threads, cxx]() -> std::optional<MachineLimits> {
    auto m = probe_machine({.refresh = true, .cxx = cxx});
    if (!m) return std::nullopt;
    return machine_limits(*m, threads);
  };
}

}  // namespace kf
