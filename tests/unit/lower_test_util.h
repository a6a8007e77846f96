// Helpers for the schedule and lowering tests: load a task from the source tree, lower it with a
// schedule given as text, and judge the generated C++ (correctness only, fixed seed).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/evaluator.h"
#include "lower/lower.h"
#include "schedule/compiled_task.h"
#include "schedule/pipeline.h"
#include "schedule/primitives.h"
#include "support/test_env.h"
#include "te/compile.h"

namespace kf::testing {

// A task by its path relative to the source tree ("bench/jaxbench/08_gemm").
inline Task task_at(const std::string& rel) {
  auto t = load_task(source_dir() / rel);
  KF_CHECK(t.has_value()) << t.error().message();
  return *t;
}

// The paths of the suite's tasks relative to the source tree ("bench/jaxbench/08_gemm"), in name
// order (a directory lists in no fixed order).
inline std::vector<std::string> suite_task_paths() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() / "bench/jaxbench"))
    if (std::filesystem::exists(e.path() / "task.toml"))
      out.push_back("bench/jaxbench/" + e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// A task loaded as a mode loads it (compile_task): with its parsed spec and default pipeline.
inline CompiledTask compiled_at(const std::string& rel) {
  auto t = compile_task(source_dir() / rel);
  KF_CHECK(t.has_value()) << t.error().message();
  return std::move(*t);
}

inline sched::Schedule schedule_of(const std::string& text,
                                   const std::string& file = "test.sched") {
  auto s = sched::parse_schedule(text, file);
  KF_CHECK(s.has_value()) << s.error().message();
  return *s;
}

// The task's parsed and checked TE spec.
inline te::Program program_of(const Task& task) {
  auto p = te::compile_spec(task);
  KF_CHECK(p.has_value()) << p.error().message();
  return std::move(*p);
}

// The default-scheduled pipeline of a task.
inline sched::Pipeline pipeline_of(const Task& task) {
  auto p = te::compile_spec(task);
  KF_CHECK(p.has_value()) << p.error().message();
  return sched::make_pipeline(*p, task);
}

// The error of applying `text` to the task's pipeline ("" when it applies).
inline std::string schedule_error(const Task& task, const std::string& text) {
  sched::Pipeline p = pipeline_of(task);
  Status s = sched::apply_schedule(p, schedule_of(text));
  return s.ok() ? "" : s.message();
}

// Judges `source` on every test shape (not timed) and returns the verdict's name, with the
// message and diagnostics appended when it is not ok.
inline std::string judge(const Task& task, const std::string& source, uint64_t seed = 7,
                         int threads = 1) {
  EvalOptions o;
  o.time = false;
  o.seed = seed;
  o.threads = threads;
  // Correctness is under test, not the compile limit: the largest generated kernels take a
  // minute to compile on a loaded 2-core machine.
  o.compile.timeout_s = 300;
  auto r = evaluate(task, source, o);
  if (!r) return "evaluate failed: " + r.error().message();
  std::string v(verdict_name(r->verdict));
  if (r->verdict == Verdict::ok) return v;
  v += ": " + r->message;
  for (const auto& d : r->diagnostics) v += "\n  " + d;
  return v;
}

// Lowers the task with `schedule_text` and judges the result ("ok" on success).
inline std::string lower_and_judge(const Task& task, const std::string& schedule_text,
                                   uint64_t seed = 7, int threads = 1) {
  auto src = generate_kernel(task, schedule_of(schedule_text), {});
  if (!src) return "lowering failed: " + src.error().message();
  std::string v = judge(task, *src, seed, threads);
  return v == "ok" ? v : v + "\n--- schedule:\n" + schedule_text + "\n--- source:\n" + *src;
}

}  // namespace kf::testing
