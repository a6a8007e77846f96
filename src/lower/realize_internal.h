// The realizer behind realize_stages (realize.h), shared by its files: realize.cpp (the nests
// and their placement) and realize_fill.cpp (a point's statement, double-buffered fills,
// input prefetches). Internal to lowering.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "lower/loop_tree.h"
#include "lower/realize.h"
#include "lower/region.h"
#include "support/check.h"

namespace kf::lowering::realize_detail {

using ir::Expr;
using ir::Stmt;
using sched::LoopKind;

struct Realization {
  int stage = -1;
  const sched::Stage* s = nullptr;
  std::unique_ptr<LoopTree> tree;
  BufferView view;
  std::vector<int> all;         // every loop, in nest order
  std::vector<int> init_order;  // pure loops inside the outermost reduction loop
  int first_reduce = -1;
};

inline Expr var(const std::string& name) {
  return ir::Var::make(ir::Type::i64(), name);
}

inline Expr product(const std::vector<Expr>& v) {
  Expr p = ir::i64(1);
  for (const Expr& e : v) p = p * e;
  return ir::simplify(p);
}

inline bool is_arg_reduce(const sched::Stage& s) {
  return s.reduction &&
         (s.body.reduce_op == te::ReduceOp::argmax || s.body.reduce_op == te::ReduceOp::argmin);
}

class Realizer {
 public:
  Realizer(const sched::Pipeline& p, const RealizeOptions& o) : p_(p), o_(o) {}

  Stmt run();

 private:
  ir::Type storage_type(const sched::Stage& s) const {
    if (s.output >= 0) return ir::type_of(p_.task->outputs[s.output].dtype);
    return value_type(*p_.task, s.type);
  }
  ir::Type arg_value_type(const sched::Stage& s) const {
    return value_type(*p_.task, s.body.args[0].type);
  }

  // The extents of stage s's buffer as stored: the innermost stored dim rounded up to a
  // multiple of s.row_align (align_storage, which only an intermediate of two or more dims
  // takes), so that every row starts where the first one does modulo a cache line.
  static std::vector<Expr> stored_extents(const sched::Stage& s, std::vector<Expr> extents) {
    if (s.row_align > 0) {
      const auto d = static_cast<size_t>(s.storage_order.back());
      const Expr a = ir::i64(s.row_align);
      extents[d] = ir::simplify((extents[d] + (a - ir::i64(1))) / a * a);
    }
    return extents;
  }
  static Expr padded_size(const sched::Stage& s, const std::vector<Expr>& extents) {
    return product(stored_extents(s, extents));
  }

  // A buffer named `name` holding `extents` elements per dim, starting at `mins`.
  BufferView make_view(int stage, const std::string& name, const std::vector<Expr>& logical,
                       const std::vector<Expr>& mins) const;

  BufferView root_view(int stage, const Region& full) const {
    const sched::Stage& s = p_.stages[stage];
    std::vector<Expr> zeros(s.vars.size(), ir::i64(0));
    if (s.output < 0) return make_view(stage, s.name, full.extent, zeros);
    // Outputs keep the task's row-major layout (and a separate buffer of best values).
    BufferView v = make_view(stage, p_.task->outputs[s.output].name, full.extent, zeros);
    Expr stride = ir::i64(1);
    for (size_t d = s.vars.size(); d-- > 0;) {
      v.strides[d] = stride;
      stride = ir::simplify(stride * full.extent[d]);
    }
    if (is_arg_reduce(s)) v.value_buffer = s.name + ".val";
    return v;
  }

  int lanes_for(const sched::Stage& s, const sched::Loop& l) const {
    if (l.lanes > 0) return l.lanes;
    return s.type == te::ValueType::f64 && p_.task->dtype != DType::f64 ? o_.lanes_f32
                                                                        : o_.lanes_f64;
  }

  Stmt realize(int stage, const Region& region, const BufferView& view);

  Stmt emit(const Realization& r, const std::vector<int>& order, size_t k, const NestContext& ctx,
            bool init);

  // The loop of leaf order[k] (or its partitioned/strip-mined form) and everything inside.
  Stmt emit_leaf(const Realization& r, const std::vector<int>& order, size_t k,
                 const NestContext& ctx, bool init);

  // Whether the parallel loop `loop` is lowered as one contiguous chunk per thread: a producer
  // computed at it is double buffered (filled an iteration ahead, which needs the iterations
  // that follow one another on a thread).
  bool chunk_per_thread(const Realization& r, const sched::Loop& loop, const Extent& ext) const;

  // for (t = 0; t < threads; ++t) in parallel:  (chunk = ceil(n / threads))
  //   for (k = 0; k < min(chunk, n - t * chunk); ++k) { L = t * chunk + k; body }
  // The same iterations as a parallel For, each thread's in order.
  Stmt chunked(const std::string& name, const std::string& leaf, const Expr& n, NestContext ctx,
               const std::function<Stmt(const NestContext&)>& body);

  // `loop` wrapped in the allocations that double-buffered producers inside it hoisted out of
  // its body (their two copies live across its iterations).
  Stmt with_hoisted(const std::string& loop_var, Stmt loop) {
    auto it = hoisted_.find(loop_var);
    if (it == hoisted_.end()) return loop;
    for (const Hoisted& h : it->second)
      loop = ir::Allocate::make(h.name, h.type, h.size, ir::MemoryKind::heap, loop);
    hoisted_.erase(it);
    return loop;
  }

  template <typename Body>
  Stmt emit_vector(const Realization& r, const sched::Loop& loop, const std::string& name,
                   const Extent& ext, const NestContext& ctx, int w, Body& body) {
    auto c = ir::as_const_int(ext.expr);
    if (c && *c == w)
      return ir::For::make(name, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                           body(ctx, Expr(), ext.exact));
    if ((c && *c < w) || (ext.nominal && *ext.nominal <= w)) {
      int lanes = 2;
      const int64_t need = c ? *c : *ext.nominal;
      while (lanes < need && lanes < w) lanes *= 2;
      Expr guard = (c && *c == lanes) ? Expr() : ir::lt(var(name), ext.expr);
      return ir::For::make(name, ir::i64(0), ir::i64(lanes), ir::ForKind::vectorized,
                           body(ctx, guard, ext.exact));
    }
    const std::string lane = name + ".vec";
    NestContext sc = ctx;
    sc.leaf_values[loop.name] = var(name) * ir::i64(w) + var(lane);
    if (!c && ext.nominal && *ext.nominal % w == 0 && *ext.nominal / w <= kMaxMaskedStrips) {
      // A tile's partial extent (min(32, N - j.o*32)): its nominal count of masked vectors,
      // unrolled, so the tile's accumulators keep constant indices (and stay in registers).
      Expr g = ir::lt(var(name) * ir::i64(w) + var(lane), ext.expr);
      return ir::For::make(name, ir::i64(0), ir::i64(*ext.nominal / w), ir::ForKind::unrolled,
                           ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                         body(sc, g, ext.exact)));
    }
    if (ctx.in_tail) {
      // In a tail: one loop of (masked) vectors.
      Expr g = c && *c % w == 0 ? Expr() : ir::lt(var(name) * ir::i64(w) + var(lane), ext.expr);
      Expr count = ir::simplify((ext.expr + ir::i64(w - 1)) / ir::i64(w));
      return ir::For::make(name, ir::i64(0), count, ir::ForKind::serial,
                           ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                         body(sc, g, ext.exact)));
    }
    // Strip-mine: vectors of w lanes, then one masked vector for the rest.
    const Expr main = ir::simplify(ext.expr / ir::i64(w));
    auto mc = ir::as_const_int(main);
    Stmt m = ir::For::make(name, ir::i64(0), main,
                           mc && *mc <= 8 ? ir::ForKind::unrolled : ir::ForKind::serial,
                           ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                         body(sc, Expr(), ext.exact)));
    if (c && *c % w == 0) return m;
    Expr g = ir::lt(var(name) * ir::i64(w) + var(lane), ext.expr);
    Stmt t = ir::IfThenElse::make(
        ir::lt(main * ir::i64(w), ext.expr),
        ir::LetStmt::make(name, main,
                          ir::For::make(lane, ir::i64(0), ir::i64(w), ir::ForKind::vectorized,
                                        body(sc, g, ext.exact))));
    (void)r;
    return ir::Block::make({m, t});
  }

  // Whether to split the outer loop of split `sp` into full iterations and a tail: when the
  // inner side has loops that need a constant trip count, inside this loop.
  bool wants_partition(const Realization& r, const std::vector<int>& order, size_t k, int sp,
                       const NestContext& ctx) const;

  // Inside the loop of order[k]: guards for variables that may overshoot, producers computed
  // at this loop, then the inner loops.
  Stmt after_bind(const Realization& r, const std::vector<int>& order, size_t k, NestContext ctx,
                  bool init, const Expr& guard);

  Stmt inject(const std::vector<int>& producers, size_t i, const NestPoint& at,
              const std::function<Stmt()>& rest);

  Stmt point(const Realization& r, const NestContext& ctx, bool init);

  // Producer P computed at a loop L whose iterations run in order on one thread (a serial For
  // from 0, or one thread's chunk of a parallel loop: NestContext::trips gives the index k of
  // the iteration in that run and the run's length n), filled one iteration ahead into the other
  // half of a buffer of two copies (hoisted around the run):
  //   if (k == 0) fill copy L&1 for iteration L
  //   row = 0
  //   ... consumers; in every EVERY-th iteration of the double_buffer loop:
  //         if (k + 1 < n && row < rows) { fill row `row` of copy (L+1)&1; prefetch the inputs
  //         of row + kRowsAhead; ++row }
  //   if (k + 1 < n) fill the rows left of copy (L+1)&1
  // nullopt (the caller fills P in place) when L is not such a loop or P's extent moves with L.
  std::optional<Stmt> double_buffered(const std::vector<int>& producers, size_t i,
                                      const NestPoint& at, const std::function<Stmt()>& rest,
                                      const Region& R, const Region& named,
                                      const std::vector<std::pair<std::string, Expr>>& lets,
                                      BufferView v);

  // Prefetches of the task inputs that `s` loads (the stores and their values dropped).
  Stmt input_prefetches(const Stmt& s) const;

  struct Hoisted {
    std::string name;
    ir::Type type;
    Expr size;
  };
  std::map<std::string, std::vector<Hoisted>> hoisted_;  // by loop variable
  static constexpr int64_t kRowsAhead = 4;

  const sched::Pipeline& p_;
  RealizeOptions o_;
  NameGen names_;
  std::map<int, BufferView> views_;
  static constexpr int64_t kMaxMaskedStrips = 4;
  static constexpr int64_t kMaxGuardedUnroll = 16;  // rows of a register tile's tail

  static void enter_tail(NestContext& c) {
    ++c.tails;
    c.in_tail = c.tails > kFullTailNesting;
  }

  int tail_depth_ = 0;  // > 0 while emitting the tail copy of a partitioned loop
};

}  // namespace kf::lowering::realize_detail
