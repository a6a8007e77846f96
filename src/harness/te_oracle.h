// The tensor-expression oracle in the judge: the task's TE program, interpreted in float64 in the
// judge's own process, decides correctness on test shapes (at the bench shape the compiled
// reference<double> does: the interpreter is exact but not fast). The reference at double stays
// a second oracle, and cross_check_te() shows that the two agree.
//
//   auto out = run_te_oracle(program, task, shape, oracle_worker);   // oracle's inputs, set 0
//   auto rows = cross_check_te(task, /*seeds=*/2, /*seed=*/0);        // every test shape
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/sandbox.h"
#include "te/compile.h"

namespace kf {

// Interprets `program` on the inputs held in set 0 of `oracle` (a worker whose floating buffers
// are f64, see ShimKind::oracle). Returns one f64 vector per task output.
Expected<std::vector<std::vector<double>>> run_te_oracle(const te::Program& program,
                                                         const Task& task,
                                                         const ShapeInstance& shape,
                                                         const Worker& oracle);

struct CrossCheckRow {
  std::string shape;
  uint64_t seed = 0;
  bool passed = false;
  double rel_l2 = 0;   // worst over the outputs
  std::string detail;  // first disagreement
};

// Runs the TE program and reference<double> on the same fresh inputs at every test shape
// (`seeds` seeds each) and compares them (relative L2 error below 1e-10). Fails when the task has
// no TE spec, the spec does not compile, or the reference does not run.
Expected<std::vector<CrossCheckRow>> cross_check_te(const Task& task, int seeds, uint64_t seed);

}  // namespace kf
