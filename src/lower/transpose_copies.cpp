#include "lower/transpose_copies.h"

#include <optional>

#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace kf::lowering {

namespace {

using ir::Expr;
using ir::Stmt;

// The coefficient of `var` in `e` when e is affine in var (every product has at most one factor
// that uses var, and var appears nowhere else); nullopt otherwise.
std::optional<Expr> coefficient(const Expr& e, const std::string& var) {
  if (!ir::expr_uses_var(e, var)) return ir::i64(0);
  if (const ir::Var* v = e.as<ir::Var>()) {
    if (v->name == var) return ir::i64(1);
    return std::nullopt;
  }
  const ir::Binary* b = e.as<ir::Binary>();
  if (!b || e.type() != ir::Type::i64()) return std::nullopt;
  auto ca = coefficient(b->a, var), cb = coefficient(b->b, var);
  if (!ca || !cb) return std::nullopt;
  switch (b->op) {
    case ir::BinOp::add:
      return ir::simplify(*ca + *cb);
    case ir::BinOp::sub:
      return ir::simplify(*ca - *cb);
    case ir::BinOp::mul:
      if (!ir::expr_uses_var(b->a, var)) return ir::simplify(b->a * *cb);
      if (!ir::expr_uses_var(b->b, var)) return ir::simplify(*ca * b->b);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// The strides of an index in the nest's two variables, when both are loop-invariant.
struct Strides {
  Expr outer, inner;
};
std::optional<Strides> strides(const Expr& index, const std::string& a, const std::string& b) {
  auto ca = coefficient(index, a), cb = coefficient(index, b);
  if (!ca || !cb) return std::nullopt;
  for (const Expr* c : {&*ca, &*cb})
    if (ir::expr_uses_var(*c, a) || ir::expr_uses_var(*c, b)) return std::nullopt;
  return Strides{*ca, *cb};
}

// A stride the blocks may use: symbolic (a buffer's extent), or a constant of at least `lanes`
// in magnitude, so the lanes x lanes elements of one block are distinct.
bool wide_stride(const Expr& stride, int lanes) {
  auto c = ir::as_const_int(stride);
  return !c || *c >= lanes || *c <= -lanes;
}

class TransposeCopies : public ir::IRMutator {
 public:
  explicit TransposeCopies(const TransposeOptions& o) : o_(o), f32_(o.f32_params) {}

 protected:
  Stmt mutate_allocate(const ir::Allocate* op, const Stmt& s) override {
    // The allocation shadows any buffer of that name while its body is mutated.
    const bool had = f32_.contains(op->name);
    set_f32(op->name, op->element_type == ir::Type::f32());
    Stmt r = IRMutator::mutate_allocate(op, s);
    set_f32(op->name, had);
    return r;
  }

  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    if (op->for_kind == ir::ForKind::vectorized) {
      ++in_vector_;
      Stmt r = IRMutator::mutate_for(op, s);
      --in_vector_;
      return r;
    }
    if (in_vector_ == 0)
      if (Stmt t = blocked(op); t.defined()) return t;
    return IRMutator::mutate_for(op, s);
  }

 private:
  // The blocked form of the nest `outer`, or an undefined Stmt when it is not a transposing copy.
  Stmt blocked(const ir::For* outer) {
    if (outer->for_kind != ir::ForKind::serial && outer->for_kind != ir::ForKind::parallel)
      return {};
    const ir::For* inner = outer->body.as<ir::For>();
    if (!inner || inner->for_kind != ir::ForKind::serial) return {};
    const std::string &a = outer->name, &b = inner->name;
    if (ir::expr_uses_var(inner->min, a) || ir::expr_uses_var(inner->extent, a)) return {};
    const ir::Store* st = inner->body.as<ir::Store>();
    if (!st || st->predicate.defined() || st->index.type() != ir::Type::i64()) return {};
    const ir::Load* ld = st->value.as<ir::Load>();
    if (!ld || ld->predicate.defined() || ld->type != ir::Type::f32() ||
        ld->index.type() != ir::Type::i64() || ld->buffer == st->buffer)
      return {};
    if (!f32_.count(st->buffer) || !f32_.count(ld->buffer)) return {};
    auto d = strides(st->index, a, b), r = strides(ld->index, a, b);
    if (!d || !r) return {};
    // u: the variable of dst's unit stride, v: the variable of src's.
    bool u_is_a;
    if (ir::is_const(d->outer, 1) && ir::is_const(r->inner, 1)) {
      u_is_a = true;
    } else if (ir::is_const(d->inner, 1) && ir::is_const(r->outer, 1)) {
      u_is_a = false;
    } else {
      return {};
    }
    const Expr dst_stride = u_is_a ? d->inner : d->outer;  // dst's stride in v
    const Expr src_stride = u_is_a ? r->outer : r->inner;  // src's stride in u
    const int lanes = o_.lanes;
    for (const ir::For* l : {outer, inner})  // a constant extent below one block: nothing to gain
      if (auto e = ir::as_const_int(l->extent); e && *e < lanes) return {};
    if (!wide_stride(dst_stride, lanes) || !wide_stride(src_stride, lanes)) return {};

    const Expr L = ir::i64(lanes);
    const Expr na = ir::simplify(outer->extent / L), nb = ir::simplify(inner->extent / L);
    const std::string ta = a + ".tb", tb = b + ".tb", tl = a + ".tl";
    const Expr va = ir::Var::make(ir::Type::i64(), ta), vb = ir::Var::make(ir::Type::i64(), tb);
    const Expr a0 = ir::simplify(outer->min + va * L), b0 = ir::simplify(inner->min + vb * L);
    auto at_block = [&](const Expr& index) {
      return ir::simplify(ir::substitute(b, b0, ir::substitute(a, a0, index)));
    };
    Stmt block = ir::TransposeBlock::make(st->buffer, at_block(st->index), dst_stride, ld->buffer,
                                          at_block(ld->index), src_stride, ir::Type::f32(), lanes);
    // Columns past the last whole block, for the block's rows.
    const Expr b_rest = ir::simplify(inner->min + nb * L);
    Stmt cols = ir::For::make(
        tl, ir::i64(0), L, ir::ForKind::serial,
        ir::For::make(
            b, b_rest, ir::simplify(inner->extent - nb * L), ir::ForKind::serial,
            ir::substitute(a, ir::simplify(a0 + ir::Var::make(ir::Type::i64(), tl)), inner->body)));
    Stmt blocks = ir::For::make(
        ta, ir::i64(0), na, outer->for_kind,
        ir::Block::make({ir::For::make(tb, ir::i64(0), nb, ir::ForKind::serial, block), cols}));
    // Rows past the last whole block, every column.
    Stmt rows =
        ir::For::make(a, ir::simplify(outer->min + na * L), ir::simplify(outer->extent - na * L),
                      ir::ForKind::serial, outer->body);
    return ir::simplify(ir::Block::make({blocks, rows}));
  }

  void set_f32(const std::string& name, bool f32) {
    if (f32) f32_.insert(name);
    if (!f32) f32_.erase(name);
  }

  const TransposeOptions& o_;
  std::set<std::string> f32_;
  int in_vector_ = 0;
};

}  // namespace

Stmt transpose_copies(const Stmt& s, const TransposeOptions& options) {
  if (options.lanes < 2) return s;
  return TransposeCopies(options).mutate(s);
}

}  // namespace kf::lowering
