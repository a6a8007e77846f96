// The evaluator's inside (evaluator.h is its interface): the Judge walks one compiled candidate
// through the test shapes (evaluator_judge.cpp) and the bench shape (evaluator_bench.cpp), and
// records every finding in the RunResult it was given.
//
//   Judge judge(task, options, result, te_program);
//   auto ok = judge.check_test_shapes(candidate, oracle);   // false: a verdict was recorded
//   if (ok && *ok) ok = judge.bench(candidate, oracle, reference, baseline, rival);
//
// Only the harness includes this header.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/checker.h"
#include "harness/evaluator.h"
#include "harness/sandbox.h"
#include "harness/shim.h"
#include "te/compile.h"

namespace kf {

// A solution compiled for one role: the candidate, the f64 oracle, the reference, a baseline.
struct Solution {
  std::string so;
  ShimKind kind;
  const Backend* backend = &cpu_backend();  // what runs it
  std::string id;  // its compiled object's key (the oracle's names its answers in OracleCache)
};

std::vector<BufferSpec> layout_for(const Task& task, const ShapeInstance& inst, ShimKind kind);
// Total bytes of one input set of `kind`'s layout (inputs and outputs).
size_t set_bytes(const Task& task, const ShapeInstance& inst, ShimKind kind);
Expected<std::unique_ptr<Worker>> start_worker(const Task& task, const ShapeInstance& inst,
                                               const Solution& s, int sets, const EvalOptions& o);
// Draws input set `set` of `w` from `seed`.
Status fill_inputs(const Task& task, const ShapeInstance& inst, Worker& w, int set, uint64_t seed);
// Copies the inputs of `src` (task dtypes) into `dst`, widening floating tensors if `dst` is the
// oracle (f64).
void copy_inputs(const Task& task, const ShapeInstance& inst, const Worker& src, int src_set,
                 Worker& dst, int dst_set, ShimKind dst_kind);
void poison_outputs(const Task& task, const ShapeInstance& inst, Worker& w, int set, ShimKind kind);
std::string inputs_hash(const Task& task, const Worker& w);

// The oracle's outputs as f64 arrays, one per task output.
using OracleOutputs = std::vector<const double*>;
OracleOutputs worker_outputs(const Task& task, const Worker& oracle);
// Compares every output of set `set` of `w` with the oracle's.
CompareResult compare_outputs(const Task& task, const ShapeInstance& inst, const Worker& w, int set,
                              const OracleOutputs& want);

class Judge {
 public:
  Judge(const Task& task, const EvalOptions& o, RunResult& res, const te::Program* program);

  // True once a verdict other than ok was recorded.
  bool failed() const { return failed_; }
  void fail(Verdict v, const std::string& message, std::vector<std::string> diags = {});
  void note(const std::string& line) const {
    if (o_.progress) o_.progress(line);
  }
  uint64_t next_seed() { return seed_ + 0x9e3779b97f4a7c15ull * ++seed_count_; }

  // Each returns false with the verdict recorded when the candidate fails, and an error when the
  // task or the environment is broken.
  Expected<bool> check_test_shapes(const Solution& cand, const Solution& oracle);
  Expected<bool> bench(const Solution& cand, const Solution& oracle,
                       const std::optional<Solution>& reference,
                       const std::optional<Solution>& baseline,
                       const std::optional<Solution>& rival);

 private:
  struct Bench;  // the bench shape's workers and inputs (evaluator_bench.cpp)

  // After a run of the candidate: inputs intact, nothing written outside its outputs, and
  // outputs that stay put after the kernel returned.
  void check_side_effects(Worker& w, const std::string& input_hash, int set, double run_s,
                          const std::string& where);
  void record(const ShapeInstance& inst, uint64_t seed, const CompareResult& c, bool timed);
  // Bench steps (evaluator_bench.cpp).
  Expected<bool> start_bench_workers(Bench& b, const Solution& cand, const Solution& oracle,
                                     const std::optional<Solution>& reference,
                                     const std::optional<Solution>& baseline,
                                     const std::optional<Solution>& rival);
  void find_oracle_answers(Bench& b, const Solution& oracle);
  Expected<double> run_oracle(Bench& b, int content);
  OracleOutputs full_answer(const Bench& b, bool last) const;
  Expected<bool> prepare_inputs(Bench& b);
  Expected<bool> warm_up(Bench& b);
  Expected<bool> time_bench(Bench& b);
  void judge_cpu_use(const Bench& b);
  bool verify_after_timing(Bench& b);
  void judge_roofline(const ShapeInstance& inst);

  const Task& task_;
  const EvalOptions& o_;
  RunResult& res_;
  const te::Program* program_;  // the TE oracle for test shapes; null when the task has no spec
  uint64_t seed_ = 0, seed_count_ = 0;
  bool failed_ = false;
};

}  // namespace kf
