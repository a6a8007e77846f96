#include "codegen/vector_registers.h"

#include "ir/ir_visitor.h"

namespace kf {
namespace {

using namespace ir;

class VectorAccesses : public IRVisitor {
 public:
  VectorAccesses(const std::string& buffer, int64_t extent) : buffer_(buffer), extent_(extent) {}
  int lanes = 0;  // the common lane count so far
  bool ok = true;
  bool any = false;

  void check(Type t, const Expr& index) {
    any = true;
    const Ramp* r = index.as<Ramp>();
    auto base = r ? as_const_int(r->base) : std::nullopt;
    if (!t.is_vector() || !r || !base || !is_const(r->stride, 1) ||
        (lanes != 0 && lanes != t.lanes()) || *base % t.lanes() != 0 || *base < 0 ||
        *base + t.lanes() > extent_) {
      ok = false;
      return;
    }
    lanes = t.lanes();
  }

 protected:
  void visit_load(const Load* op) override {
    if (op->buffer == buffer_) check(op->type, op->index);
    IRVisitor::visit_load(op);
  }
  void visit_store(const Store* op) override {
    if (op->buffer == buffer_) check(op->value.type(), op->index);
    IRVisitor::visit_store(op);
  }
  void visit_transpose_block(const TransposeBlock* op) override {
    if (op->dst == buffer_ || op->src == buffer_) ok = false;  // addressed through pointers
    IRVisitor::visit_transpose_block(op);
  }

 private:
  const std::string& buffer_;
  int64_t extent_;
};

}  // namespace

int promotable_vector_lanes(const Allocate& alloc) {
  auto extent = as_const_int(alloc.extent);
  if (alloc.memory != MemoryKind::stack || alloc.element_type.is_vector() ||
      alloc.element_type.is_bool() || alloc.element_type.kind() == ScalarKind::bf16 || !extent)
    return 0;
  VectorAccesses v(alloc.name, *extent);
  v.visit(alloc.body);
  if (!v.ok || !v.any || *extent % v.lanes != 0) return 0;
  return v.lanes;
}

}  // namespace kf
