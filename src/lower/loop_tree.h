// The split tree of one realization of a stage: how its original variables (LHS vars over the
// realized region, loop reduction vars over their ranges) map to its leaf loops after the
// schedule's splits and fuses, with each node's extent and value.
//
//   split C.i i.o i.i 6   over i in [0, M):
//     extent(i.o) = (M + 5) / 6
//     extent(i.i) = min(6, M - C.i.o*6)   once i.o is bound (outside i.i); 6 in the full part of
//                                          a partitioned i.o loop; 6, inexact, if i.i is outside
//     value(i)    = C.i.o*6 + C.i.i;  var_value(i) = min_i + value(i)
//
// Tails: an extent is `exact` when it is the true iteration count; otherwise it is a constant
// upper bound (the split factor), and lowering guards the nodes whose values may overshoot.
// The context says which leaves are bound (emitted outside the current point), which splits are
// known to be full (the steady-state copy of a partitioned loop), and the values of
// strip-mined leaves (vectorized loops split into strips of lanes).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "lower/interval.h"
#include "schedule/pipeline.h"

namespace kf::lowering {

struct TreeRoot {
  std::string name;                // the original variable (= its loop name before splits)
  ir::Expr min;                    // first value (region min, or the reduction's lo)
  ir::Expr extent;                 // number of values
  std::optional<int64_t> nominal;  // constant upper bound of extent, if any
};

// Tail copies of partitioned loops nested up to this depth are themselves partitioned (a GEMM's
// row tail still runs whole column tiles in registers); deeper ones are compiled compactly, so
// code grows at most 2^(kFullTailNesting + 1)-fold with the number of partitioned loops.
inline constexpr int kFullTailNesting = 1;

struct NestContext {
  std::set<std::string> bound;                  // leaf names bound outside the current point
  std::set<int> full;                           // indices into Stage::splits known to be full
  std::map<std::string, ir::Expr> leaf_values;  // strip-mined leaves: strip * lanes + lane
  std::set<std::string> overshoot;              // nodes whose value may exceed their extent
  int tails = 0;            // tail copies of partitioned loops this point is nested in
  bool in_tail = false;     // tails > kFullTailNesting: keep code compact (no more partitions)
  bool where_full = false;  // the stage's reduction predicate is known true here
  // Loops whose iterations run in order on one thread, every one of them: leaf -> the index of
  // the iteration among those (from 0) and their count. A serial For: its variable and trip
  // count; a parallel loop given as one contiguous chunk per thread: the index in the chunk and
  // the chunk's size. A producer computed at one of them may be double buffered.
  struct Run {
    ir::Expr index, count;
  };
  std::map<std::string, Run> trips;
};

struct Extent {
  ir::Expr expr;  // exact count, or a constant upper bound when !exact
  bool exact = true;
  std::optional<int64_t> nominal;  // constant upper bound, if any
};

class LoopTree {
 public:
  // roots: the stage's LHS vars in order, then its loop reduction vars in loop_rvars() order.
  LoopTree(const sched::Stage& s, std::vector<TreeRoot> roots);

  const sched::Stage& stage() const { return s_; }
  // The IR variable name of a leaf loop: "STAGE.LOOP".
  std::string var_name(const std::string& leaf) const { return s_.name + "." + leaf; }
  bool is_leaf(const std::string& node) const { return s_.find_loop(node) >= 0; }
  const std::vector<std::string>& leaves_of(const std::string& node) const;
  // Nodes one level up (the split parent, or both halves of a fuse), and the node's split record.
  std::vector<std::string> parents_of(const std::string& node) const;
  // Nodes one level down (the halves of a split, or the loop a fuse made).
  std::vector<std::string> children_of(const std::string& node) const;
  // The split that produced `node` with it as the outer half, or -1.
  int split_as_outer(const std::string& node) const;
  int split_as_inner(const std::string& node) const;

  Extent extent(const std::string& node, const NestContext& ctx) const;
  ir::Expr value(const std::string& node, const NestContext& ctx) const;
  // An original variable's value: min + value(root).
  ir::Expr root_value(int root, const NestContext& ctx) const;
  // The range an original variable covers while the unbound leaves run (absolute values).
  Interval root_range(int root, const NestContext& ctx) const;
  const TreeRoot& root(int r) const { return roots_[r]; }
  size_t root_count() const { return roots_.size(); }

 private:
  Interval range(const std::string& node, const NestContext& ctx) const;
  bool all_bound(const std::string& node, const NestContext& ctx) const;
  bool none_bound(const std::string& node, const NestContext& ctx) const;

  const sched::Stage& s_;
  std::vector<TreeRoot> roots_;
  std::map<std::string, int> root_index_;
  std::map<std::string, int> produced_by_;  // node -> split record that created it
  std::map<std::string, int> consumed_by_;  // node -> split record that split or fused it
  mutable std::map<std::string, std::vector<std::string>> leaves_;
};

}  // namespace kf::lowering
