// The search's analytic cost model: a predicted time for a candidate before it is compiled, so a
// search spends its evaluation budget on the promising proposals (docs/search.md). It ranks the
// candidates of one task; its absolute times are rough (a run reports its Spearman correlation
// against the measured times, rank_correlation.h).
//
//   CostEstimate e = estimate_cost(task, candidate, machine, target, /*threads=*/4);
//   e.seconds;        // predicted median time at the bench shape
//   e.bound;          // "compute", "memory" or "cache": the term that set it
//   e.features;       // what the model read off the candidate (known = false: roofline only)
//   e.why;            // one line for people: the figures behind the time
//
// Call order: estimate_cost reads the candidate (read_features: lower the generated candidate's
// schedule and walk the loop nest at the bench shape), then prices the features on the machine
// (estimate_from_features). Both halves are public so a policy can price cached features on
// another thread count, and tests can price features built by hand.
//
// The model (every constant is in cost_model.cpp with its rule):
//   time = max(compute, memory, cache)
//   compute = flops / peak, each flop charged
//       lanes factor:  vector work at W lanes runs at W / target lanes of the peak, scalar work
//                      at 1 / target lanes (vector_share of the work is vectorized)
//       Amdahl:        the parallel share runs on min(threads, parallel trips) cores, the rest
//                      on one (peak_gflops(t) of the machine, never below the 1-thread peak)
//   memory  = compulsory bytes at the bandwidth of the level the task's data fits (L2 of the
//             cores used: cache_gbps; L3: between L2 and DRAM; else DRAM) + the bytes a tile
//             that does not keep its reuse in L2 fetches again (refetch_bytes) from L3 or DRAM
//   cache   = memory instructions executed (loads and stores outside register tiles) at the
//             rate of one per FMA issue slot, with the same Amdahl split
// A candidate that is not generated (written source), or whose schedule does not parse or lower,
// has only the roofline: known = false, compute = flops / peak, memory = bytes / bandwidth.
// Never throws; an unprobed machine (zero figures) is priced with stand-in figures and why says
// so.
#pragma once

#include <string>

#include "agents/messages.h"
#include "harness/machine.h"
#include "harness/target.h"
#include "ir/ir.h"
#include "schedule/compiled_task.h"

namespace kf::search {

// What the model read off a candidate, at the task's bench shape.
struct CostFeatures {
  double flops = 0, bytes = 0;   // the task's counts at the bench shape (its formulas)
  double working_set_bytes = 0;  // of the tile: the outermost loop on the hot path whose
                                 // footprint fits L2 (the innermost loop if none does); 0 if
                                 // unknown
  std::string tile;              // that loop's name ("" if unknown)
  double nest_bytes = 0;         // footprint of the hottest top-level loop nest
  double refetch_bytes = 0;      // executions of the tile x its working set
  int vector_lanes = 1;          // lanes of the vector work's dominant width (1: scalar)
  double vector_share = 0;       // share of the work (elements stored) in vector stores
  double parallel_share = 0;     // share of the work under a parallel loop
  double parallel_trips = 0;     // iterations of the parallel loop holding the most work
  double work = 0;               // elements stored, all statements at the bench shape
  double memory_ops = 0;         // loads and stores executed outside register tiles
  int threads = 1;               // threads it is priced on
  bool known = false;            // false: only the roofline is known (flops, bytes)
};

struct CostEstimate {
  double seconds = 0;
  std::string bound;  // "compute" | "memory" | "cache"
  CostFeatures features;
  std::string why;
};

// Reads a lowered kernel's features at the bench shape `inst` of `task` (loop extents with the
// dims bound). Sets known = true; flops and bytes come from `inst`. `l2_bytes` sizes the tile.
CostFeatures read_features(const ir::LoweredFunc& func, const Task& task, const ShapeInstance& inst,
                           double l2_bytes, int threads);

// Prices features on a machine and target. Features with known = false get the roofline alone.
// Zero or non-finite machine figures are replaced by stand-ins (named in why). Never throws.
CostEstimate estimate_from_features(const CostFeatures& f, const MachineInfo& machine,
                                    const Target& target, int threads);

// The whole model: for a candidate with `generated` data and a task with a TE spec, the schedule
// is parsed, replayed and lowered (lower/lower.h) and the loop nest read; for any other
// candidate, or when any step fails (why says which), the roofline alone. Never throws.
CostEstimate estimate_cost(const CompiledTask& task, const agents::CandidateMsg& c,
                           const MachineInfo& machine, const Target& target, int threads);

}  // namespace kf::search
