// The mechanical forms of the catalog's strategies (agents/strategy.h): each turns a scheduled
// pipeline and knob values into groups of schedule primitives. They read the pipeline's current
// state (stages, loops, where each stage is computed), so they compose: register_block then
// pack_operand packs the operand of the tile register_block made.
//
//   Expected<std::vector<MoveGroup>> g = moves_vectorize_inner(p, {{"lanes", 16}}, ctx);
//
// A form returns the groups it would apply (possibly none: "nothing to do here"); legality is
// the schedule layer's job (primitives.h), and the implementer skips a group it refuses.
#pragma once

#include "agents/strategy.h"

namespace kf::agents::builtin {

Expected<std::vector<MoveGroup>> moves_inline_elementwise(const sched::Pipeline&, const Knobs&,
                                                          const MoveContext&);
Expected<std::vector<MoveGroup>> moves_fuse_into_consumer(const sched::Pipeline&, const Knobs&,
                                                          const MoveContext&);
Expected<std::vector<MoveGroup>> moves_vectorize_inner(const sched::Pipeline&, const Knobs&,
                                                       const MoveContext&);
Expected<std::vector<MoveGroup>> moves_reorder_unit_stride(const sched::Pipeline&, const Knobs&,
                                                           const MoveContext&);
Expected<std::vector<MoveGroup>> moves_rfactor_reduction(const sched::Pipeline&, const Knobs&,
                                                         const MoveContext&);
Expected<std::vector<MoveGroup>> moves_parallel_outer(const sched::Pipeline&, const Knobs&,
                                                      const MoveContext&);
Expected<std::vector<MoveGroup>> moves_fuse_parallel_loops(const sched::Pipeline&, const Knobs&,
                                                           const MoveContext&);
Expected<std::vector<MoveGroup>> moves_register_block(const sched::Pipeline&, const Knobs&,
                                                      const MoveContext&);
Expected<std::vector<MoveGroup>> moves_register_block_epilogue(const sched::Pipeline&, const Knobs&,
                                                               const MoveContext&);
Expected<std::vector<MoveGroup>> moves_pack_operand(const sched::Pipeline&, const Knobs&,
                                                    const MoveContext&);
Expected<std::vector<MoveGroup>> moves_unroll_reduction(const sched::Pipeline&, const Knobs&,
                                                        const MoveContext&);
Expected<std::vector<MoveGroup>> moves_accumulate_locally(const sched::Pipeline&, const Knobs&,
                                                          const MoveContext&);
Expected<std::vector<MoveGroup>> moves_tile_2d(const sched::Pipeline&, const Knobs&,
                                               const MoveContext&);
Expected<std::vector<MoveGroup>> moves_unroll_inner(const sched::Pipeline&, const Knobs&,
                                                    const MoveContext&);
Expected<std::vector<MoveGroup>> moves_streaming_stores(const sched::Pipeline&, const Knobs&,
                                                        const MoveContext&);
Expected<std::vector<MoveGroup>> moves_double_buffer(const sched::Pipeline&, const Knobs&,
                                                     const MoveContext&);
Expected<std::vector<MoveGroup>> moves_prefetch(const sched::Pipeline&, const Knobs&,
                                                const MoveContext&);
// A reduction stage whose vectors along its last pure var would gather an operand read with the
// reduction var last: a transposed copy of that operand (cache_read + reorder_storage, computed
// once per slice), the reduction moved outside, the var vectorized.
Expected<std::vector<MoveGroup>> moves_change_layout(const sched::Pipeline&, const Knobs&,
                                                     const MoveContext&);
// moves_rewrite.cpp: `reciprocal S` for every stage with a division it can invert once.
Expected<std::vector<MoveGroup>> moves_strength_reduce(const sched::Pipeline&, const Knobs&,
                                                       const MoveContext&);
// moves_rewrite.cpp: an inlined stage with a transcendental that several stages read is
// computed once, at the last reader's outer loop (the other readers at root moved there too),
// and vectorized.
Expected<std::vector<MoveGroup>> moves_recompute_vs_store(const sched::Pipeline&, const Knobs&,
                                                          const MoveContext&);
// moves_rewrite.cpp: `hoist S S_h V...` for every computed stage with a costly subexpression that
// does not read some of its variables (the set of variables chosen to free the most).
Expected<std::vector<MoveGroup>> moves_hoist_invariants(const sched::Pipeline&, const Knobs&,
                                                        const MoveContext&);
// moves_rewrite.cpp: `phase_split S S_ph` for each strided transposed convolution at root with
// its default loops (phase_split_candidates): every s-th tap of each decomposed dim counts, the
// rest multiply a zero and pay a division, a modulo and a bounds test; by phases, only the taps
// that count run, as plain unit-stride convolutions over zero-padded copies.
Expected<std::vector<MoveGroup>> moves_phase_split(const sched::Pipeline&, const Knobs&,
                                                   const MoveContext&);
struct PhaseSplit {
  int stage = -1;      // index into p.stages
  std::string name;    // the phase stage's name
  int64_t phases = 1;  // product of the strides: one tap in this many counts
};
std::vector<PhaseSplit> phase_split_candidates(const sched::Pipeline& p);
// moves_rewrite.cpp: `online_softmax M` (+ `vectorize_reductions M`) for every row maximum
// whose softmax or log-sum-exp it turns into one pass.
Expected<std::vector<MoveGroup>> moves_online_softmax(const sched::Pipeline&, const Knobs&,
                                                      const MoveContext&);
// A row maximum `online_softmax` takes.
struct OnlineSoftmax {
  std::string stage;
  // The probabilities exp(x - m) are read beyond the normalizer (attention's P @ V, a softmax's
  // output): their exp runs twice per value, once in the logsumexp and once for them. Only the
  // pass over the row is saved. False for the log-sum-exp idiom (cross entropy): a whole pass.
  bool probabilities_used = false;
};
std::vector<OnlineSoftmax> online_softmax_candidates(const sched::Pipeline& p);
// moves_rewrite.cpp: `approximate S` for every stage with exp/log/tanh/erf/sigmoid, where the
// task's tolerance leaves room for the fast forms (f32, rel_l2 >= 1e-5).
Expected<std::vector<MoveGroup>> moves_fast_approximations(const sched::Pipeline&, const Knobs&,
                                                           const MoveContext&);
bool approximation_allowed(const Task& task);
// The stages `approximate` would change (indices into p.stages); none when the tolerance is
// too tight for it.
std::vector<int> approximable_stages(const sched::Pipeline& p);
// moves_cpu.cpp: `align_storage S` for each intermediate at root whose rows (its innermost
// stored dim, at the bench shape) are not whole cache lines and that a vector loop reads or
// writes (misaligned_rows: their indices into p.stages).
Expected<std::vector<MoveGroup>> moves_aligned_loads(const sched::Pipeline&, const Knobs&,
                                                     const MoveContext&);
std::vector<int> misaligned_rows(const sched::Pipeline& p);
// moves_cpu.cpp: a reduction at root with fewer outputs than threads and a long reduction
// (split_k_candidates) is split into one slice per thread: partial results computed in
// parallel (rfactor), each thread's accumulated locally and stored once, then combined.
Expected<std::vector<MoveGroup>> moves_split_k_parallel(const sched::Pipeline&, const Knobs&,
                                                        const MoveContext&);
struct SplitK {
  int stage = -1;     // index into p.stages
  int64_t chunk = 0;  // reduction steps per thread at the bench shape
};
std::vector<SplitK> split_k_candidates(const sched::Pipeline& p, int threads);
// moves_cpu.cpp: a parallel loop over a stage's innermost stored dim (one element per
// iteration; line_sharing_loops) runs in chunks of whole cache lines.
Expected<std::vector<MoveGroup>> moves_avoid_false_sharing(const sched::Pipeline&, const Knobs&,
                                                           const MoveContext&);
std::vector<int> line_sharing_loops(const sched::Pipeline& p, int threads);
// moves_rewrite.cpp: `hoist_gathers S` for each computed stage that reads through an index read
// at a variable divided by a dim (gathered_stages: 06's page table at t / PS), unless a stage it
// is computed in has it already (the pages are that stage's loops).
Expected<std::vector<MoveGroup>> moves_gather_hoisting(const sched::Pipeline&, const Knobs&,
                                                       const MoveContext&);
std::vector<int> gathered_stages(const sched::Pipeline& p);
// moves_cpu.cpp: on a machine with several memory nodes (and threads), each intermediate at root
// written by a serial loop and read by a parallel stage gets its outer loop parallel: its pages
// are then first touched (placed) by the threads that use them, not all on the first thread's
// node (scratch buffers persist across calls, so the first call's writer places them for good).
// Nothing on a single-node machine.
Expected<std::vector<MoveGroup>> moves_numa_first_touch(const sched::Pipeline&, const Knobs&,
                                                        const MoveContext&);
std::vector<int> first_touch_stages(const sched::Pipeline& p, const MoveContext& ctx);
struct HoistCandidate {
  std::string stage;
  std::vector<std::string> vars;  // the hoisted subexpression reads none of them
  double saved = 0;               // its share of the stage's per-point cost, 0..1
};
std::vector<HoistCandidate> hoist_candidates(const sched::Pipeline& p);

// The inlined stages with exp/log/tanh/erf/sigmoid/pow that two or more stages read (each
// evaluates it again), as indices into p.stages.
std::vector<int> recomputed_transcendentals(const sched::Pipeline& p);
// Whether `reciprocal STAGE` applies (the stage divides by a value invariant along its
// innermost loop).
bool reciprocal_applies(const sched::Pipeline& p, const std::string& stage);

// Facts about a pipeline the planner's rules use.
struct PipelineFacts {
  int stages = 0;
  int pure_intermediates_at_root = 0;  // candidates for inlining
  int intermediates_at_root = 0;       // candidates for fusion
  int read_in_part = 0;                // ... read only over ranges that move with their readers
  int gemm_like = 0;                   // reductions with >= 2 pure loops and a reduce loop
  int tileable = 0;                    // ... of those, read unit-stride along the tile's columns
  int register_blocked = 0;            // stages accumulated in a local tile
  int packed = 0;                      // cache_read stages
  int packed_in_loop = 0;              // ... filled inside a serial loop (once per panel)
  int double_buffered = 0;             // ... of those, filled an iteration ahead
  int strided_operands = 0;            // stages change_layout would vectorize with a copy
  int inline_row_reductions = 0;       // ... computed inside a definition (moving ranges)
  int heavy_inline_reductions = 0;     // ... of those, over a whole dim or of exp/div/sqrt terms
  int row_reductions = 0;              // reductions whose pure loops cannot be vectorized
  int vectorized = 0, parallel = 0;    // stages with a vectorized / parallel loop
  int unvectorized = 0;                // computed stages with no vectorized loop
  int recurrences = 0;
  int invertible_divisions = 0;        // stages whose divisions `reciprocal` would rewrite
  int recomputed_transcendentals = 0;  // inlined exp/erf/... stages evaluated by 2+ readers
  int hoistable = 0;                   // stages with a costly subexpression free of some var
  int approximable = 0;                // stages with exp/log/tanh/erf/sigmoid approximate takes
  int tanh_softplus = 0;               // ... tanh(log(1 + exp(x))) compositions among them
  int misaligned_rows = 0;             // intermediates whose rows split cache lines
  int paged_gathers = 0;               // stages hoist_gathers would run by pages
  int phase_splittable = 0;            // strided transposed convolutions phase_split takes
  int64_t phases = 1;                  // ... the largest product of strides among them
  double hoist_saved = 0;              // the largest share of a stage's cost hoisting saves
};
PipelineFacts pipeline_facts(const sched::Pipeline& p);

// Whether every element of intermediate s need not be computed: a reader reduces over it in a
// range that moves with the reader's own variables (01's scores, read by the row max over
// j in 0..i + 1), directly or through elementwise stages. Computed at root, the part no one
// reads (the masked half of causal scores) is computed anyway; fused at the reader's row loop,
// region inference computes just the part read.
bool read_only_in_part(const sched::Pipeline& p, const sched::Stage& s);

}  // namespace kf::agents::builtin
