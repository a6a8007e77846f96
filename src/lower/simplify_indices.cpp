#include "lower/simplify_indices.h"

#include "ir/ir_visitor.h"
#include "lower/interval.h"

namespace kf::lowering {

namespace {

using ir::Expr;

Expr canonical(const Expr& index) {
  if (!index.defined()) return index;
  if (index.type() == ir::Type::i64()) return simplify_linear(index);
  if (const ir::Ramp* r = index.as<ir::Ramp>())
    if (r->base.type() == ir::Type::i64())
      return ir::Ramp::make(simplify_linear(r->base), r->stride, r->lanes);
  return index;
}

class SimplifyIndices : public ir::IRMutator {
 protected:
  Expr mutate_load(const ir::Load* op, const Expr& e) override {
    Expr l = IRMutator::mutate_load(op, e);
    const ir::Load* n = l.as<ir::Load>();
    return ir::Load::make(n->type, n->buffer, canonical(n->index), n->predicate);
  }
  ir::Stmt mutate_store(const ir::Store* op, const ir::Stmt& s) override {
    ir::Stmt st = IRMutator::mutate_store(op, s);
    const ir::Store* n = st.as<ir::Store>();
    return ir::Store::make(n->buffer, canonical(n->index), n->value, n->predicate);
  }
  ir::Stmt mutate_transpose_block(const ir::TransposeBlock* op, const ir::Stmt& s) override {
    ir::Stmt st = IRMutator::mutate_transpose_block(op, s);
    const ir::TransposeBlock* n = st.as<ir::TransposeBlock>();
    return ir::TransposeBlock::make(n->dst, canonical(n->dst_index), n->dst_stride, n->src,
                                    canonical(n->src_index), n->src_stride, n->type, n->lanes);
  }
};

}  // namespace

ir::Stmt simplify_indices(const ir::Stmt& s) {
  return SimplifyIndices().mutate(s);
}

}  // namespace kf::lowering
