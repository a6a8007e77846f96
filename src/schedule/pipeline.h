// The scheduled pipeline: the stages a kernel computes (the TE program, normalized) and, for each
// stage, its schedule state — loops after splits/fuses/reorders, loop kinds, where it is computed,
// its storage order. Schedule primitives (primitives.h) edit it; lowering (lower/lower.h) reads it.
//
//   Expected<Pipeline> p = make_pipeline(program, task);   // default schedule
//   Stage& c = p->stages[p->find("C")];
//   c.loops  == {i, j, k}            // LHS vars in order, then the reduction vars (innermost)
//   Status s = apply(*p, parse_primitive("split C.i i.o i.i 32"));
//   c.loops  == {i.o, i.i, j, k}, c.splits == {split i -> i.o, i.i by 32}
//
// Normalization (make_pipeline): a reduction that is not the whole body of its stage becomes a
// stage of its own, named after the stage with `_r` (`_r2`, ...), over the variables it reads:
//   ms[n] = sum(d: x[n, d] * x[n, d]) / D    →    ms_r[n] = sum(d: x[n, d] * x[n, d])
//                                                 ms[n]   = ms_r[n] / D
// so every reduction can be scheduled (split, reordered, rfactored, computed at a consumer).
// Reductions whose range is not static (`j in 0..lens[b]`), that sit in a select branch or an
// `else` value, or that belong to a recurrence stay inline and are lowered as an inner loop. A
// static reduction nested in one whose range moves (`sum(j in 0..t % 64 + 1: sum(n: ...))`) is
// lifted over the static range covering the outer variable's values (lift_subexpression).
//
// Design notes:
// - Expressions stay te::Expr (te/ast.h); a RefKind::stage ref indexes Pipeline::stages, which
//   is in evaluation order. insert_stage() keeps refs valid when primitives add stages.
// - Loop names are unique within a stage; the IR names a loop "STAGE.LOOP". A stage's original
//   iteration variables (LHS vars, then the reduction's vars) are the roots of its split tree;
//   `splits` records the tree in the order it was built, `loops` are its leaves in nest order.
// - A pure loop carries no dependence; a reduction loop carries the accumulation; a scan loop
//   (derived from a recurrence's scan dim) must run serially, in ascending order.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "task/task.h"
#include "te/ast.h"

namespace kf::sched {

enum class LoopKind { serial, parallel, vectorized, unrolled };
std::string to_string(LoopKind k);

struct Loop {
  std::string name;  // "i", "i.o", "k.i", "ij"
  LoopKind kind = LoopKind::serial;
  int lanes = 0;         // vectorized: vector width; 0 = the target's natural width
  bool reduce = false;   // derived from a reduction variable
  bool scan = false;     // derived from the scan dim of a recurrence
  int64_t prefetch = 0;  // > 0: each iteration prefetches the inputs this many ahead read
  bool uniform = false;  // specialize_uniform: a second body for iterations whose index reads
                         // agree (lower/specialize_uniform.h)
};

enum class SplitKind { split, fuse };

// One edge of the split tree. split: parent -> (outer, inner) with inner in [0, factor);
// fuse: (outer, inner) -> parent, parent = outer * extent(inner) + inner.
struct Split {
  SplitKind kind = SplitKind::split;
  std::string parent, outer, inner;
  int64_t factor = 0;
};

enum class ComputeKind { root, inlined, at };

struct ComputeLoc {
  ComputeKind kind = ComputeKind::root;
  std::string stage, loop;  // at: the loop of `stage` inside which this stage is computed
};

// A reduction predicate's partition hint (rfactor of a split with a tail): the update runs only
// where outer * factor + inner < extent; `outer` is a reduction var, `inner` a pure var.
struct WhereSplit {
  std::string outer, inner;
  int64_t factor = 0;
  te::Expr extent;
};

// A stage computed at a serial loop L, produced one iteration of L ahead into a second buffer:
// while iteration i consumes its copy, the copy for i + 1 is filled one row (one iteration of the
// stage's outermost loop) every `every` iterations of `stage`.`loop`, with the next rows' inputs
// prefetched; whatever is left is filled at the end of iteration i. A packed operand's reads of
// memory then overlap the compute that uses the previous one.
struct DoubleBuffer {
  std::string stage, loop;  // the loop (of a stage inside L) that carries the rows
  int64_t every = 32;
};

// The primitive that made a stage. Passes and brains ask this field, never the note (text for
// people, which later primitives may extend).
enum class StageOrigin {
  spec,         // a stage of the TE program
  cache_read,   // a packed copy of an operand (origin_of: the tensor copied)
  cache_write,  // the accumulator of a stage (origin_of: that stage)
  padded_copy,  // phase_split's zero-padded copy of an operand (origin_of: the tensor)
  rfactor,      // the partial reduction of a stage (origin_of: that stage)
  phase_split,  // one phase of a strided convolution (origin_of: the split stage)
  lifted,       // a subexpression lifted out of a stage into its own (origin_of: that stage)
};
std::string_view origin_name(StageOrigin origin);

struct Stage {
  // What it computes.
  std::string name;
  int output = -1;  // index into task.outputs, -1 for an intermediate
  te::ValueType type = te::ValueType::f64;
  std::vector<te::IndexVar> vars;  // pure (storage) dims in LHS order; lo is 0
  std::vector<te::IndexVar> reduce_vars;
  te::Expr body;                  // a reduction stage: the reduce node itself
  bool reduction = false;         // body is a reduce whose rvars are schedulable loops
  int scan_dim = -1;              // recurrence: the dim that must ascend
  std::optional<te::Expr> where;  // reduction stages: update only where true
  std::optional<WhereSplit> where_split;
  std::string note;  // provenance for people, e.g. "cache_write of C"
  StageOrigin origin = StageOrigin::spec;
  std::string origin_of;  // the stage or tensor it was made from ("" for a spec stage)

  // How (its schedule).
  std::vector<Loop> loops;    // outermost first
  std::vector<Split> splits;  // in the order applied
  ComputeLoc compute;
  std::vector<int> storage_order;  // dims outermost first: a permutation of 0..vars-1
  bool nontemporal = false;        // outputs: full-vector stores bypass the caches
  int row_align = 0;               // align_storage: the innermost stored dim is padded to
                                   // a multiple of this many elements (0: dense)
  bool hoist_gathers = false;      // hoist_gathers: loops divided by a dim run by pages
  int reduce_lanes = 0;            // vectorize_reductions: lanes of its inline reductions'
                                   // partial results (-1: the target's width; 0: scalar)
  std::optional<DoubleBuffer> double_buffer;

  // The reduction variables that are loops (the top reduce node's rvars); empty if pure.
  const std::vector<int>& loop_rvars() const;
  int find_loop(const std::string& loop) const;  // index into loops, or -1
  bool is_recurrence() const { return scan_dim >= 0; }
};

struct Pipeline {
  const Task* task = nullptr;
  std::vector<Stage> stages;  // evaluation order
  // Layout copies make_pipeline substituted into their readers (substitute_layout_copies).
  std::vector<std::string> substituted;

  int find(const std::string& name) const;  // index into stages, or -1
  // Stages whose definition reads stage `s` (directly), ascending.
  std::vector<int> readers(int s) const;
  // Stages that consume `s` once inlined stages are looked through, ascending.
  std::vector<int> consumers(int s) const;
  // Inserts `stage` at `pos`, shifting RefKind::stage refs everywhere.
  void insert_stage(int pos, Stage stage);
  // Removes a stage no other stage reads (refs to later stages are renumbered).
  void remove_stage(int pos);
  // Canonical text: each stage's definition and schedule (for golden tests and dumps).
  std::string to_string() const;
};

// Builds the default-scheduled pipeline of a checked program (see the normalization above).
Pipeline make_pipeline(const te::Program& program, const Task& task);

// The last normalization of make_pipeline: a stage that only copies an input with its dims
// permuted (`Bt[k, j] = B[j, k]`), each over the input's whole dim, and that only reductions
// read, is substituted into them and removed (its name is kept in `substituted`): the layout an
// operand is read in is the schedule's choice (cache_read + reorder_storage), so a product
// written with a transpose stage and one written directly are the same pipeline.
void substitute_layout_copies(Pipeline& p);

// The default loops of a stage: its LHS vars in order, then its loop reduction vars.
std::vector<Loop> default_loops(const Stage& s);

// The original iteration variables (roots of s's split tree) that loop `loop` derives from: its
// own name, the variable it was split from, or those of the loops fused into it.
std::set<std::string> loop_roots(const Stage& s, const std::string& loop);

// The stage at root whose loop nest stage s is computed in, following compute_at chains (s
// itself at root or inlined); `loop`, when given, gets the loop of that stage the chain enters
// it at ("" for s itself).
int root_host(const Pipeline& p, int s, std::string* loop = nullptr);

// `base`, or `base2`, `base3`, ...: the first name that is not a stage, a tensor or a dim of the
// task (for a base without '.', one check_new_stage_name accepts).
std::string unique_stage_name(const Pipeline& p, const std::string& base);

// The largest value integer expression `e` takes over stage `s`'s index space, as a static
// expression, when `e` is nondecreasing in every index var it reads (`t + 1` -> T); nullopt
// otherwise (a decreasing term, a tensor read, a product with a non-constant factor).
std::optional<te::Expr> static_max(const te::Expr& e, const Stage& s);

// The static range [lo, hi) that covers every value reduction var `v` takes in stage `s`: its
// own range when static; else, for bounds nondecreasing in the stage's index vars (`s in 0..t +
// 1`, `s in c * 64..min(c * 64 + 64, L)`), lo's smallest value up to hi's largest.
std::optional<std::pair<te::Expr, te::Expr>> covering_range(const te::IndexVar& v, const Stage& s);

// Whether access index `idx` in stage `e`'s definition is surely within [0, extent): a variable
// of `e` (an index var, or a reduction var with a static range) whose range is 0..extent,
// compared as text.
bool surely_within(const te::Expr& idx, const Stage& e, const te::Expr& extent);

// Lifting a subexpression of a stage's definition into a stage of its own, over the variables
// it reads: the stage's index vars it reads, then the free reduction vars (those of enclosing
// reductions) it reads. A free reduction var whose range is not static is lifted over the range
// that covers all its values when one exists (`s in 0..t + 1` -> 0..T); can_lift says whether
// every free var has one.
//   y[b, t, h] = sum(s in 0..t + 1: sum(n: C[b, t, n] * B[b, s, n]) * x[b, s, h])
//   lift the sum(n: ...)  ->  G[b, t, s in 0..T] = sum(n: C[b, t, n] * B[b, s, n])
//                             y[b, t, h] = sum(s in 0..t + 1: G[b, t, s] * x[b, s, h])
// `r` must be a node of stage si's body; the new stage is inserted before si (computed at root,
// default loops) and `r` becomes an access to it.
bool can_lift(const Stage& s, const te::Expr& r);
void lift_subexpression(Pipeline& p, int si, te::Expr& r, const std::string& name,
                        const std::string& note);

}  // namespace kf::sched
