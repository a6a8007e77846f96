#include "ir/unroll_loops.h"

#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace kf::ir {
namespace {

class UnrollLoops : public IRMutator {
 protected:
  Stmt mutate_for(const For* op, const Stmt& s) override {
    Stmt body = mutate(op->body);
    if (op->for_kind != ForKind::unrolled) {
      if (body.same_as(op->body)) return s;
      return For::make(op->name, op->min, op->extent, op->for_kind, body);
    }
    auto extent = as_const_int(simplify(op->extent));
    if (!extent) return For::make(op->name, op->min, op->extent, ForKind::serial, body);
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < *extent; ++i)
      copies.push_back(simplify(substitute(op->name, simplify(op->min + i64(i)), body)));
    return Block::make(std::move(copies));
  }
};

}  // namespace

Stmt unroll_loops(const Stmt& s) {
  return UnrollLoops().mutate(s);
}

}  // namespace kf::ir
