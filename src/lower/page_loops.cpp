#include "lower/page_loops.h"

#include <map>

#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace kf::lowering {

namespace {

using ir::BinOp;
using ir::Expr;
using ir::Stmt;

// `v / C` or `v % C` with v a variable and C one of `dims`, as {v, C}.
std::optional<std::pair<std::string, std::string>> division(const ir::Binary* b,
                                                            const std::set<std::string>& dims) {
  if (b->op != BinOp::div && b->op != BinOp::mod) return std::nullopt;
  const ir::Var* v = b->a.as<ir::Var>();
  const ir::Var* c = b->b.as<ir::Var>();
  if (!v || !c || !dims.count(c->name)) return std::nullopt;
  return std::pair{v->name, c->name};
}

// Phase 1: the serial loops (from 0) around a marked stage's gathers whose variable the index of
// the gathered index divides by a dim, with that dim. A loop divided by two dims is dropped.
class FindPagedLoops : public ir::IRVisitor {
 public:
  FindPagedLoops(const std::set<std::string>& stages, const std::set<std::string>& dims)
      : stages_(stages), dims_(dims) {}

  std::map<std::string, std::string> result() const {
    std::map<std::string, std::string> out = loops_;
    for (const std::string& v : conflicts_) out.erase(v);
    return out;
  }

 protected:
  void visit_producer_consumer(const ir::ProducerConsumer* op) override {
    const int marked = op->is_producer && stages_.count(op->name) ? 1 : 0;
    marked_ += marked;
    IRVisitor::visit_producer_consumer(op);
    marked_ -= marked;
  }
  void visit_for(const ir::For* op) override {
    const bool serial = op->for_kind == ir::ForKind::serial && ir::is_const(op->min, 0);
    if (serial) open_.insert(op->name);
    IRVisitor::visit_for(op);
    if (serial) open_.erase(op->name);
  }
  void visit_load(const ir::Load* op) override {
    // Inside a marked stage's index, a load is the gathered index; its own index holds the
    // division (page_table[n*MAXP + t / PS] inside k_pages[...]).
    if (marked_ > 0 && in_index_ > 0) {
      depth_ = 1;
      IRVisitor::visit(op->index);
      depth_ = 0;
    }
    ++in_index_;
    IRVisitor::visit_load(op);
    --in_index_;
  }
  void visit_binary(const ir::Binary* op) override {
    IRVisitor::visit_binary(op);
    if (depth_ == 0) return;
    auto d = division(op, dims_);
    if (!d || !open_.count(d->first)) return;
    auto [it, fresh] = loops_.emplace(d->first, d->second);
    if (!fresh && it->second != d->second) conflicts_.insert(d->first);
  }

 private:
  const std::set<std::string>& stages_;
  const std::set<std::string>& dims_;
  std::set<std::string> open_;
  std::map<std::string, std::string> loops_;
  std::set<std::string> conflicts_;
  int marked_ = 0, in_index_ = 0, depth_ = 0;
};

// v / C -> page and v % C -> within (those exact forms; other uses of v are substituted after).
class ReplaceDivisions : public ir::IRMutator {
 public:
  ReplaceDivisions(std::string v, std::string c, Expr page, Expr within)
      : v_(std::move(v)), c_{std::move(c)}, page_(std::move(page)), within_(std::move(within)) {}

 protected:
  Expr mutate_binary(const ir::Binary* op, const Expr& e) override {
    if (auto d = division(op, c_); d && d->first == v_)
      return op->op == BinOp::div ? page_ : within_;
    return IRMutator::mutate_binary(op, e);
  }

 private:
  std::string v_;
  std::set<std::string> c_;  // the one divisor, as division() takes it
  Expr page_, within_;
};

// Phase 2: each loop found runs by pages.
class SplitByPages : public ir::IRMutator {
 public:
  explicit SplitByPages(std::map<std::string, std::string> loops) : loops_(std::move(loops)) {}

 protected:
  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    Stmt st = IRMutator::mutate_for(op, s);
    const ir::For* f = st.as<ir::For>();
    auto it = f ? loops_.find(f->name) : loops_.end();
    if (it == loops_.end()) return st;
    const ir::Type i64 = ir::Type::i64();
    const Expr size = ir::max(ir::Var::make(i64, it->second), ir::i64(1));
    const std::string pg = f->name + ".pg", in = f->name + ".in";
    const Expr page = ir::Var::make(i64, pg), within = ir::Var::make(i64, in);
    Stmt body = ReplaceDivisions(f->name, it->second, page, within).mutate(f->body);
    body = ir::substitute(f->name, page * size + within, body);
    Stmt inner = ir::For::make(in, ir::i64(0), ir::simplify(ir::min(size, f->extent - page * size)),
                               ir::ForKind::serial, body);
    return ir::For::make(pg, ir::i64(0), ir::simplify((f->extent + size - ir::i64(1)) / size),
                         ir::ForKind::serial, inner);
  }

 private:
  std::map<std::string, std::string> loops_;
};

}  // namespace

Stmt page_loops(const Stmt& s, const std::set<std::string>& stages,
                const std::set<std::string>& dims) {
  if (stages.empty()) return s;
  FindPagedLoops find(stages, dims);
  find.visit(s);
  std::map<std::string, std::string> loops = find.result();
  if (loops.empty()) return s;
  return SplitByPages(std::move(loops)).mutate(s);
}

}  // namespace kf::lowering
