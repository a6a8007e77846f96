// Applying schedule primitives to a pipeline, each checked for legality. docs/schedule.md
// describes every primitive; in short:
//
//   split C.i i.o i.i 32         loop i → i.o (outer) and i.i (inner, 0..32); tails are handled
//   tile C i j 6 32              split i by 6 and j by 32, order i.o j.o i.i j.i
//   reorder C j.o i.o i.i j.i    the listed loops take these positions, outermost first
//   fuse C i j ij                two adjacent loops become one
//   vectorize C.j.i 16           16 lanes (a loop of any extent: the tail is masked)
//   unroll C.i.i                 replicate the body (a loop of constant extent after lowering)
//   parallel C.i.o               OpenMP threads
//   compute_at ms y.n            compute stage ms inside loop n of y, for the region y needs
//   compute_inline e             substitute e's definition into its consumers
//   compute_root ms              compute all of ms before its consumers (the default)
//   cache_read B C_acc Bp        C_acc reads B through a copy Bp (pack it with compute_at)
//   cache_write C C_acc          C_acc accumulates; C copies it out (registers, local tiles)
//   rfactor ms_r.d.i ms_rf       partial reductions over d.i (then vectorize or parallelize them)
//   reorder_storage t j i        the intermediate t is stored with j outermost
//   nontemporal y                the output y's full-vector stores bypass the caches
//   prefetch e.d 4096            each iteration of e.d prefetches what iteration d + 4096 reads
//   double_buffer B_pk C.k 32    B_pk (computed at a loop L) is filled for L's next iteration
//                                while this one runs: a row every 32 iterations of C.k
//   reciprocal y                 y's divisions by values invariant along its innermost loop
//   vectorize_reductions m 16    m's inline reductions (moving ranges) as 16 partial results
//                                become multiplications by 1 / divisor (constants fold)
//   align_storage e 16           e's rows (innermost stored dim) padded to 16 elements
//   approximate m                m's exp/log/tanh/erf/sigmoid by the fast f32 forms
//   hoist y W p                  y's costliest subexpression that does not read y's var p
//                                (nor any other var listed) becomes a stage W over the vars
//                                it reads: computed once, not once per p
//   online_softmax m             the row max m becomes a one-pass logsumexp; its normalizer
//                                sum (and the division by it) goes
//
//   Pipeline p = make_pipeline(program, task);
//   Status s = apply_schedule(p, schedule);   // "gemm.sched:4: cannot vectorize C.k: ..."
//
// Legality (each refused with a message that names the loop and the reason): a loop that
// carries a dependence — a reduction loop, or a recurrence's scan loop — is never vectorized or
// parallelized; a recurrence's scan loops keep their order; at most one parallel and one
// vectorized loop per stage, no parallel loop inside another (also through compute_at), nothing
// computed inside a vectorized loop; outputs and recurrences stay at root; a compute_at location
// must enclose every consumer of the stage; loop names stay unique within a stage.
// A failed primitive leaves the pipeline unchanged.
#pragma once

#include "schedule/pipeline.h"
#include "schedule/trace.h"
#include "support/status.h"

namespace kf::sched {

// Applies one primitive. Errors say what is wrong without a location (the caller adds it).
Status apply_primitive(Pipeline& p, const Primitive& prim);

// Replays a whole trace; errors read "FILE:LINE: message".
Status apply_schedule(Pipeline& p, const Schedule& s);

// Checks the invariants every scheduled pipeline keeps (the legality rules above), so a
// primitive that breaks one indirectly (e.g. splitting a loop another stage is computed at) is
// refused too.
Status validate(const Pipeline& p);

}  // namespace kf::sched
