// The realizer's leaves: a point's statement, the double-buffered fill of a producer, and the
// prefetches of a fill's inputs.
#include "lower/realize_internal.h"

namespace kf::lowering::realize_detail {

// Inserts `step` at the top of the body of every serial or unrolled loop named `loop` that no
// parallel or vectorized loop encloses (the step updates one cursor: it runs once per
// iteration, on one thread, in order).
class InsertAtLoop : public ir::IRMutator {
 public:
  InsertAtLoop(std::string loop, Stmt step) : loop_(std::move(loop)), step_(std::move(step)) {}
  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    const bool serial =
        op->for_kind == ir::ForKind::serial || op->for_kind == ir::ForKind::unrolled;
    outside_ += !serial;
    Stmt inner = ir::IRMutator::mutate_for(op, s);
    outside_ -= !serial;
    if (op->name != loop_ || !serial || outside_ > 0) return inner;
    const ir::For* f = inner.as<ir::For>();
    return ir::For::make(f->name, f->min, f->extent, f->for_kind,
                         ir::Block::make({step_, f->body}));
  }

 private:
  std::string loop_;
  Stmt step_;
  int outside_ = 0;  // enclosing parallel or vectorized loops
};

Stmt Realizer::point(const Realization& r, const NestContext& ctx, bool init) {
  const sched::Stage& s = *r.s;
  const size_t n = s.vars.size();
  std::vector<Expr> vals(n);
  for (size_t d = 0; d < n; ++d) vals[d] = r.tree->root_value(static_cast<int>(d), ctx);
  std::map<int, Expr> rvals;
  const std::vector<int>& rv = s.loop_rvars();
  for (size_t k = 0; k < rv.size(); ++k)
    rvals[rv[k]] = r.tree->root_value(static_cast<int>(n + k), ctx);
  const BufferView& v = r.view;
  Expr idx = ir::i64(0);
  for (size_t d = 0; d < n; ++d) {
    Expr off = ir::is_const(v.mins[d], 0) ? vals[d] : vals[d] - v.mins[d];
    idx = idx + (ir::is_const(v.strides[d], 1) ? off : off * v.strides[d]);
  }
  if (v.offset.defined()) idx = idx + v.offset;
  idx = ir::simplify(idx);
  const ir::Type vt = value_type(*p_.task, s.type);
  const te::ReduceOp op = s.body.reduce_op;
  if (init) {
    if (!is_arg_reduce(s))
      return ir::Store::make(v.name, idx, ExprLowerer::convert(reduce_identity(op, vt), v.storage));
    // No index yet (-1), as the oracle reports an empty range.
    return ir::Block::make(
        {ir::Store::make(v.value_buffer, idx, reduce_identity(op, arg_value_type(s))),
         ir::Store::make(v.name, idx, ExprLowerer::convert(ir::i64(-1), v.storage))});
  }
  ExprLowerer::Bindings b;
  b.index_var = [&](int d) { return vals[d]; };
  b.reduce_var = [&](int x) { return rvals.at(x); };
  b.stage_view = [this](int x) -> const BufferView& { return views_.at(x); };
  b.natural_lanes = p_.task->dtype == DType::f64 ? o_.lanes_f64 : o_.lanes_f32;
  ExprLowerer el(p_, r.stage, b, names_);
  Stmt st;
  if (!s.reduction) {
    st = ir::Store::make(v.name, idx, ExprLowerer::convert(el.lower(s.body), v.storage));
  } else if (!is_arg_reduce(s)) {
    Expr x = ExprLowerer::convert(el.lower(s.body.args[0]), vt);
    Expr acc = ExprLowerer::convert(ir::Load::make(v.storage, v.name, idx), vt);
    st = ir::Store::make(v.name, idx, ExprLowerer::convert(reduce_combine(op, acc, x), v.storage));
  } else {
    const ir::Type at = arg_value_type(s);
    Expr x = ExprLowerer::convert(el.lower(s.body.args[0]), at);
    Expr best = ir::Load::make(at, v.value_buffer, idx);
    Expr cur = ExprLowerer::convert(ir::Load::make(v.storage, v.name, idx), ir::Type::i64());
    Expr k = rvals.at(rv[0]);
    Expr strictly = op == te::ReduceOp::argmax ? ir::gt(x, best) : ir::lt(x, best);
    // The first value taken, then strictly better ones; ties go to the lowest index whatever
    // the loop order, as in the oracle's ascending scan.
    Expr better = ir::logical_or(ir::logical_or(ir::lt(cur, ir::i64(0)), strictly),
                                 ir::logical_and(ir::eq(x, best), ir::lt(k, cur)));
    const std::string c = names_.fresh(s.name + ".better");
    Expr cv = ir::Var::make(ir::Type::boolean(), c);
    st = ir::LetStmt::make(
        c, better,
        ir::Block::make(
            {ir::Store::make(v.value_buffer, idx, ir::select(cv, x, best)),
             ir::Store::make(v.name, idx,
                             ExprLowerer::convert(ir::select(cv, k, cur), v.storage))}));
  }
  if (s.where && !ctx.where_full) st = ir::IfThenElse::make(el.lower(*s.where), st);
  return with_preludes(el.take_preludes(), st);
}

std::optional<Stmt> Realizer::double_buffered(const std::vector<int>& producers, size_t i,
                                              const NestPoint& at,
                                              const std::function<Stmt()>& rest, const Region& R,
                                              const Region& named,
                                              const std::vector<std::pair<std::string, Expr>>& lets,
                                              BufferView v) {
  const int P = producers[i];
  const sched::Stage& ps = p_.stages[P];
  const std::string leaf = p_.stages[at.stage].loops[at.loop].name;
  auto trip = at.ctx.trips.find(leaf);  // serial loops only
  if (trip == at.ctx.trips.end()) return std::nullopt;
  const std::string lvar = at.tree->var_name(leaf);
  std::vector<Expr> extent;
  for (size_t d = 0; d < R.extent.size(); ++d) {
    if (ir::expr_uses_var(R.extent[d], lvar)) return std::nullopt;
    extent.push_back(R.nominal[d] ? ir::i64(*R.nominal[d]) : R.extent[d]);
  }
  const Expr copy = padded_size(ps, extent);
  const Expr l = var(lvar), index = trip->second.index, n = trip->second.count;
  v.offset = ir::simplify((l % ir::i64(2)) * copy);
  views_[P] = v;
  const Stmt fill = realize(P, named, v);
  Stmt body = inject(producers, i + 1, at, rest);
  views_.erase(P);
  hoisted_[lvar].push_back({v.name, v.storage, ir::simplify(copy * ir::i64(2))});

  // The next iteration's fill, split into its outermost loop's rows.
  const Stmt next = ir::substitute(lvar, l + ir::i64(1), fill);
  const Expr has_next = ir::lt(index + ir::i64(1), n);
  const ir::For* rows = next.as<ir::For>();
  const Stmt first = ir::IfThenElse::make(ir::eq(index, ir::i64(0)),
                                          ir::ProducerConsumer::make(ps.name, true, fill));
  Stmt all;
  if (!rows || rows->for_kind != ir::ForKind::serial) {
    all = ir::Block::make({first, body, ir::IfThenElse::make(has_next, next)});
  } else {
    const std::string cursor = names_.fresh(ps.name + ".row");
    const Expr done = ir::Load::make(ir::Type::i64(), cursor, ir::i64(0));
    const std::string row = names_.fresh(ps.name + ".next_row");
    const Expr r = var(row);
    const Stmt step = ir::LetStmt::make(
        row, rows->min + done,
        ir::Block::make(
            {ir::substitute(rows->name, r, rows->body),
             input_prefetches(ir::substitute(rows->name, r + ir::i64(kRowsAhead), rows->body)),
             ir::Store::make(cursor, ir::i64(0), done + ir::i64(1))}));
    const sched::DoubleBuffer& db = *ps.double_buffer;
    const std::string carrier = db.stage + "." + db.loop;
    const Stmt one = ir::IfThenElse::make(
        ir::eq(ir::Var::make(ir::Type::i64(), carrier) % ir::i64(db.every), ir::i64(0)),
        ir::IfThenElse::make(ir::logical_and(has_next, ir::lt(done, rows->extent)), step));
    const std::string left = names_.fresh(ps.name + ".rows_done");
    const Expr lv = ir::Var::make(ir::Type::i64(), left);
    const Stmt rest_of_rows = ir::IfThenElse::make(
        has_next, ir::LetStmt::make(left, done,
                                    ir::For::make(rows->name, rows->min + lv, rows->extent - lv,
                                                  ir::ForKind::serial, rows->body)));
    all = ir::Block::make({first, ir::Store::make(cursor, ir::i64(0), ir::i64(0)),
                           InsertAtLoop(carrier, one).mutate(body), rest_of_rows});
    all = ir::Allocate::make(cursor, ir::Type::i64(), ir::i64(1), ir::MemoryKind::stack, all);
  }
  for (size_t k = lets.size(); k-- > 0;)
    all = ir::LetStmt::make(lets[k].first, lets[k].second, all);
  return all;
}

Stmt Realizer::input_prefetches(const Stmt& s) const {
  class ToPrefetch : public ir::IRMutator {
   public:
    explicit ToPrefetch(const Task& t) {
      for (const auto& in : t.inputs) inputs_.insert(in.name);
    }
    Stmt mutate_store(const ir::Store* op, const Stmt&) override {
      class Loads : public ir::IRVisitor {
       public:
        explicit Loads(const std::set<std::string>& in) : in_(in) {}
        std::vector<Stmt> hints;
        void visit_load(const ir::Load* load) override {
          // Not a gathered address: computing it would read an index array rows ahead.
          if (in_.count(load->buffer) && !ir::expr_has_load(load->index))
            hints.push_back(ir::Prefetch::make(load->buffer, load->index));
          ir::IRVisitor::visit_load(load);
        }

       private:
        const std::set<std::string>& in_;
      } loads(inputs_);
      loads.visit(op->value);
      return ir::Block::make(std::move(loads.hints));  // empty when it reads no input
    }

   private:
    std::set<std::string> inputs_;
  };
  return ToPrefetch(*p_.task).mutate(s);
}

}  // namespace kf::lowering::realize_detail
