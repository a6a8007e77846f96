#include "lower/prefetch.h"

#include <map>
#include <set>

#include "ir/ir_printer.h"
#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"

namespace kf::lowering {
namespace {

using ir::Expr;
using ir::Stmt;

struct Request {
  int64_t distance = 0;  // in iterations of the schedule's loop
  int lanes = 0;         // > 1 when the schedule's loop is vectorized (strip-mined by lanes)
};

// The input loads inside a loop body, with the loops and names bound inside it.
class LoadCollector : public ir::IRVisitor {
 public:
  explicit LoadCollector(const std::set<std::string>& inputs) : inputs_(inputs) {}

  std::vector<const ir::Load*> loads;
  std::vector<std::pair<std::string, Expr>> inner_loops;  // name, min; outermost first
  std::set<std::string> bound;                            // every name bound inside

  void visit_load(const ir::Load* op) override {
    if (inputs_.count(op->buffer)) loads.push_back(op);
    ir::IRVisitor::visit_load(op);
  }
  void visit_for(const ir::For* op) override {
    inner_loops.emplace_back(op->name, op->min);
    bound.insert(op->name);
    ir::IRVisitor::visit_for(op);
  }
  void visit_let_stmt(const ir::LetStmt* op) override {
    bound.insert(op->name);
    ir::IRVisitor::visit_let_stmt(op);
  }
  void visit_let(const ir::Let* op) override {
    bound.insert(op->name);
    ir::IRVisitor::visit_let(op);
  }

 private:
  const std::set<std::string>& inputs_;
};

class InsertPrefetches : public ir::IRMutator {
 public:
  InsertPrefetches(std::map<std::string, Request> requests, std::set<std::string> inputs)
      : requests_(std::move(requests)), inputs_(std::move(inputs)) {}

  Stmt mutate_for(const ir::For* op, const Stmt& s) override {
    Stmt inner = ir::IRMutator::mutate_for(op, s);
    auto it = requests_.find(op->name);
    if (it == requests_.end()) return inner;
    const ir::For* f = inner.as<ir::For>();
    const Request& rq = it->second;
    const bool strip = rq.lanes > 1 && f->for_kind != ir::ForKind::vectorized;
    const int64_t shift = strip ? (rq.distance + rq.lanes - 1) / rq.lanes : rq.distance;

    LoadCollector c(inputs_);
    c.visit(f->body);
    std::vector<Stmt> hints;
    std::set<std::string> seen;
    for (const ir::Load* load : c.loads) {
      if (!ir::expr_uses_var(load->index, op->name)) continue;  // does not move with the loop
      Expr at = load->index;
      for (auto l = c.inner_loops.rbegin(); l != c.inner_loops.rend(); ++l)
        at = ir::substitute(l->first, l->second, at);
      at = ir::substitute(op->name, ir::Var::make(ir::Type::i64(), op->name) + ir::i64(shift), at);
      bool free = true;  // only names bound outside the body may remain
      for (const std::string& b : c.bound)
        if (ir::expr_uses_var(at, b)) free = false;
      if (!free) continue;
      // A gathered address (x[idx[i + d]]) would read idx ahead of the loop, possibly past its end.
      if (ir::expr_has_load(at)) continue;
      at = ir::simplify(at);
      if (!seen.insert(load->buffer + "[" + ir::to_string(at) + "]").second) continue;
      hints.push_back(ir::Prefetch::make(load->buffer, at));
    }
    if (hints.empty()) return inner;
    hints.push_back(f->body);
    return ir::For::make(f->name, f->min, f->extent, f->for_kind,
                         ir::Block::make(std::move(hints)));
  }

 private:
  std::map<std::string, Request> requests_;
  std::set<std::string> inputs_;
};

}  // namespace

Stmt insert_prefetches(const Stmt& s, const sched::Pipeline& p, int natural_lanes) {
  std::map<std::string, Request> requests;
  for (const sched::Stage& st : p.stages)
    for (const sched::Loop& l : st.loops)
      if (l.prefetch > 0) {
        Request r{l.prefetch, 0};
        if (l.kind == sched::LoopKind::vectorized) r.lanes = l.lanes > 0 ? l.lanes : natural_lanes;
        requests[st.name + "." + l.name] = r;
      }
  if (requests.empty()) return s;
  std::set<std::string> inputs;
  for (const auto& t : p.task->inputs) inputs.insert(t.name);
  return InsertPrefetches(std::move(requests), std::move(inputs)).mutate(s);
}

}  // namespace kf::lowering
