// The built-in planner's test scenarios (agents_builtin_planner*_test.cpp): evidence written by
// hand the way the profiler reports it, and a planner call on a task's pipeline after a recipe.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <string>

#include "agents/builtin/brain.h"
#include "builtin_test_util.h"
#include "lower_test_util.h"

namespace kf::agents::builtin::planner_test {

using builtin_test::recipe_of;

// A strategy that is a unit of its own (agents/builtin/strategies/ID.cpp) is in the catalog
// with its moves and its planner rule, and returns its default knobs.
inline Knobs unit_knobs(const std::string& id) {
  const Strategy* s = find_strategy(id);
  EXPECT_NE(s, nullptr) << id;
  if (!s) return {};
  EXPECT_NE(s->moves, nullptr) << id;
  EXPECT_NE(s->propose, nullptr) << id;
  EXPECT_TRUE(s->mechanical()) << id;
  return s->default_knobs();
}

inline Evidence evidence(const std::string& bound, double fraction, int threads = 1,
                         double cpus_busy = 1.0) {
  Evidence e;
  e.bound = bound;
  e.fraction = fraction;
  e.headroom = fraction > 0 ? 1 / fraction : 1;
  e.gflops = bound == "compute" ? 100 * fraction : 1;
  e.gbps = bound == "memory" ? 20 * fraction : 1;
  e.threads = threads;
  e.cpus_busy = cpus_busy;
  return e;
}

// A planner call on a task's pipeline after `recipe` (the best candidate's).
struct Scenario {
  Task task;
  sched::Pipeline pipeline;
  Recipe recipe;

  Scenario(const std::string& task_dir, Recipe r, int threads = 1)
      : task(testing::task_at(task_dir)), recipe(std::move(r)) {
    init(threads);
  }
  Scenario(Task t, Recipe r, int threads = 1) : task(std::move(t)), recipe(std::move(r)) {
    init(threads);
  }
  Scenario(const Scenario&) = delete;

  const MachineInfo* machine = nullptr;
  // The default pipeline, for rewrite-first strategies (online_softmax); unset, they are judged
  // on the best's pipeline, as a planner without one does.
  std::optional<sched::Pipeline> base;

  // Plans again, each time with the strategy chosen added to the tried ones, until `strategy` is
  // chosen or nothing is left: that plan (or the last one).
  Plan plan_until(const std::string& strategy, const Evidence& e) {
    std::set<std::string> tried;
    Plan p;
    for (int i = 0; i < 40; ++i) {
      p = plan(e, tried);
      if (p.strategy == strategy || p.strategy == "stop" || p.strategy.empty() ||
          tried.count(p.strategy))
        break;
      tried.insert(p.strategy);
    }
    return p;
  }

  Plan plan(const Evidence& e, std::set<std::string> tried = {}, double stop_fraction = 0.85) {
    PlanInput in;
    in.evidence = e;
    in.tried = std::move(tried);
    in.ctx = {.machine = machine, .threads = e.threads};
    in.stop_fraction = stop_fraction;
    return plan_over(in, pipeline, recipe, base ? &*base : nullptr);
  }

 private:
  void init(int threads) {
    auto p =
        pipeline_of(testing::pipeline_of(task), recipe, {.machine = nullptr, .threads = threads});
    KF_CHECK(p.has_value()) << p.error().message();
    pipeline = std::move(*p);
    pipeline.task = &task;
  }
};

// An elementwise, memory-bound task (no reduction, one stage).
inline Task elementwise_task() {
  auto t = parse_task(R"(
name        = "scale_relu"
category    = "elementwise"
description = "y = max(2 x, 0), f32"
dtype       = "f32"

[signature]
function = "scale_relu"
dims     = ["N", "D"]
inputs   = [ { name = "x", dtype = "f32", shape = ["N", "D"], dist = { kind = "normal", std = 1.0 } } ]
outputs  = [ { name = "y", dtype = "f32", shape = ["N", "D"] } ]

[shapes]
bench = { N = 4096, D = 4096 }
tests = [ { N = 1, D = 1 }, { N = 3, D = 17 } ]

[tolerance]
f32 = { rel_l2 = 1e-6, atol = 1e-6, rtol = 1e-6 }

[cost]
flops = "2 * N * D"

[te]
spec = """
y[n, d] = max(2 * x[n, d], 0)
"""
)",
                      "scale_relu/task.toml");
  KF_CHECK(t.has_value()) << t.error().message();
  return *t;
}

}  // namespace kf::agents::builtin::planner_test
