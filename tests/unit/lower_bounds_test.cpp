// Must-fail tests for lowering's work bounds (lower.h, "Bounds"): schedules and specs that once
// made lowering run for minutes or without end are refused quickly, with the line or stage named.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "lower_test_util.h"

namespace kf {
namespace {

using testing::schedule_of;
using testing::task_at;

// The error of lowering `task` with `schedule` ("" when it lowers), and how long it took.
std::string lower_error(const Task& task, const sched::Schedule& schedule, double* seconds,
                        const LowerOptions& options = {}) {
  const auto start = std::chrono::steady_clock::now();
  auto program = te::compile_spec(task);
  KF_CHECK(program.has_value()) << program.error().message();
  auto f = lower(task, *program, schedule, options);
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return f ? "" : f.error().message();
}

// `split C.i y0 z0 2`, `split C.z0 y1 z1 2`, ...: each split's inner loop split again.
std::string split_chain(int n) {
  std::string s, loop = "i";
  for (int k = 0; k < n; ++k) {
    s += "split C." + loop + " y" + std::to_string(k) + " z" + std::to_string(k) + " 2\n";
    loop = "z" + std::to_string(k);
  }
  return s;
}

TEST(LowerBounds, ChainedSplitsAreRefusedAtTheLoopLimit) {
  // 2,000 chained splits never finished lowering (200 took 31 s, 400 over a minute).
  const Task gemm = task_at("bench/jaxbench/08_gemm");
  double s = 0;
  EXPECT_EQ(lower_error(gemm, schedule_of(split_chain(2000), "chain.sched"), &s),
            "chain.sched: the schedule has 2000 steps; at most 1000 are lowered");
  EXPECT_EQ(lower_error(gemm, schedule_of(split_chain(1000), "chain.sched"), &s),
            "chain.sched:30: stage C has 33 loops; at most 32 are lowered");
  EXPECT_LT(s, 2.0);
  // Up to the limit it lowers.
  EXPECT_EQ(lower_error(gemm, schedule_of(split_chain(29)), &s), "");
}

TEST(LowerBounds, LongSchedulesAndManyStagesAreRefused) {
  const Task gemm = task_at("bench/jaxbench/08_gemm");
  std::string many;
  for (int k = 0; k < 1001; ++k) many += "unroll C.k\n";
  double s = 0;
  EXPECT_EQ(lower_error(gemm, schedule_of(many, "long.sched"), &s),
            "long.sched: the schedule has 1001 steps; at most 1000 are lowered");
  // A chain of copies of A, each read through the one before: one stage more per line.
  std::string copies = "cache_read A C A0\n";
  for (int k = 1; k < 300; ++k)
    copies += "cache_read A" + std::to_string(k - 1) + " C A" + std::to_string(k) + "\n";
  EXPECT_EQ(lower_error(gemm, schedule_of(copies, "copies.sched"), &s),
            "copies.sched:256: the pipeline has 257 stages; at most 256 are lowered");
  EXPECT_LT(s, 10.0);
}

// A copy of 12_rmsnorm whose spec is a chain of n stages t_k[...] = t_{k-1}[...] * t_{k-1}[...],
// each computed inline: the inlined expression doubles at every stage.
Task doubling_chain(int n, sched::Schedule* schedule) {
  Task t = task_at("bench/jaxbench/12_rmsnorm");
  const TensorSpec& x = t.inputs[0];
  std::string idx;
  for (size_t d = 0; d < x.shape.size(); ++d) idx += (d ? ", i" : "i") + std::to_string(d);
  std::string spec =
                  "t0[" + idx + "] = " + x.name + "[" + idx + "] * " + x.name + "[" + idx + "]\n",
              text;
  for (int k = 1; k < n; ++k) {
    const std::string prev = "t" + std::to_string(k - 1) + "[" + idx + "]";
    spec += "t" + std::to_string(k) + "[" + idx + "] = " + prev + " * " + prev + "\n";
    text += "compute_inline t" + std::to_string(k - 1) + "\n";
  }
  spec += t.outputs[0].name + "[" + idx + "] = t" + std::to_string(n - 1) + "[" + idx + "]\n";
  text += "compute_inline t" + std::to_string(n - 1) + "\n";
  t.te_spec = spec;
  *schedule = schedule_of(text);
  return t;
}

TEST(LowerBounds, InliningThatWouldExplodeIsRefusedBeforeItIsBuilt) {
  sched::Schedule schedule;
  const Task big = doubling_chain(40, &schedule);  // 2^40 nodes if it were built
  double s = 0;
  EXPECT_EQ(lower_error(big, schedule, &s),
            "stage t14 would have 1.31e+05 expression nodes nested 73 deep once the stages it "
            "reads are inlined; at most 100000 nodes and 512 levels are lowered");
  EXPECT_LT(s, 2.0);
  const Task small = doubling_chain(8, &schedule);  // 2^10 nodes: lowers
  EXPECT_EQ(lower_error(small, schedule, &s), "");
}

TEST(LowerBounds, TheDeadlineStopsLowering) {
  double s = 0;
  LowerOptions o;
  o.deadline_s = 1e-9;
  const std::string e = lower_error(task_at("bench/jaxbench/08_gemm"),
                                    schedule_of("split C.i a b 4\n", "d.sched"), &s, o);
  EXPECT_EQ(e, "d.sched:1: lowering ran past its deadline of 1e-09 s (at 'split C.i a b 4')");
}

}  // namespace
}  // namespace kf
