#include "lower/loop_tree.h"

#include <algorithm>

#include "ir/simplify.h"
#include "support/check.h"

namespace kf::lowering {

using ir::Expr;
using sched::SplitKind;

LoopTree::LoopTree(const sched::Stage& s, std::vector<TreeRoot> roots)
    : s_(s), roots_(std::move(roots)) {
  for (size_t i = 0; i < roots_.size(); ++i) root_index_[roots_[i].name] = static_cast<int>(i);
  for (size_t i = 0; i < s_.splits.size(); ++i) {
    const sched::Split& sp = s_.splits[i];
    const int rec = static_cast<int>(i);
    if (sp.kind == SplitKind::split) {
      consumed_by_[sp.parent] = rec;
      produced_by_[sp.outer] = rec;
      produced_by_[sp.inner] = rec;
    } else {
      consumed_by_[sp.outer] = rec;
      consumed_by_[sp.inner] = rec;
      produced_by_[sp.parent] = rec;
    }
  }
}

const std::vector<std::string>& LoopTree::leaves_of(const std::string& node) const {
  auto it = leaves_.find(node);
  if (it != leaves_.end()) return it->second;
  std::vector<std::string> out;
  if (is_leaf(node)) {
    out.push_back(node);
  } else if (auto c = consumed_by_.find(node); c != consumed_by_.end()) {
    const sched::Split& sp = s_.splits[c->second];
    std::vector<std::string> kids = sp.kind == SplitKind::split
                                        ? std::vector<std::string>{sp.outer, sp.inner}
                                        : std::vector<std::string>{sp.parent};
    for (const std::string& k : kids)
      for (const std::string& l : leaves_of(k))
        if (std::find(out.begin(), out.end(), l) == out.end()) out.push_back(l);
  }
  return leaves_[node] = out;
}

std::vector<std::string> LoopTree::parents_of(const std::string& node) const {
  auto it = produced_by_.find(node);
  if (it == produced_by_.end()) return {};
  const sched::Split& sp = s_.splits[it->second];
  if (sp.kind == SplitKind::split) return {sp.parent};
  return {sp.outer, sp.inner};
}

std::vector<std::string> LoopTree::children_of(const std::string& node) const {
  auto it = consumed_by_.find(node);
  if (it == consumed_by_.end()) return {};
  const sched::Split& sp = s_.splits[it->second];
  if (sp.kind == SplitKind::split) return {sp.outer, sp.inner};
  return {sp.parent};
}

int LoopTree::split_as_outer(const std::string& node) const {
  auto it = produced_by_.find(node);
  if (it == produced_by_.end()) return -1;
  const sched::Split& sp = s_.splits[it->second];
  return sp.kind == SplitKind::split && sp.outer == node ? it->second : -1;
}

int LoopTree::split_as_inner(const std::string& node) const {
  auto it = produced_by_.find(node);
  if (it == produced_by_.end()) return -1;
  const sched::Split& sp = s_.splits[it->second];
  return sp.kind == SplitKind::split && sp.inner == node ? it->second : -1;
}

bool LoopTree::all_bound(const std::string& node, const NestContext& ctx) const {
  for (const std::string& l : leaves_of(node))
    if (!ctx.bound.count(l)) return false;
  return true;
}

bool LoopTree::none_bound(const std::string& node, const NestContext& ctx) const {
  for (const std::string& l : leaves_of(node))
    if (ctx.bound.count(l)) return false;
  return true;
}

Extent LoopTree::extent(const std::string& node, const NestContext& ctx) const {
  if (auto r = root_index_.find(node); r != root_index_.end()) {
    const TreeRoot& t = roots_[r->second];
    std::optional<int64_t> nominal = t.nominal;
    if (auto c = ir::as_const_int(t.extent)) nominal = *c;
    return {t.extent, true, nominal};
  }
  auto it = produced_by_.find(node);
  KF_CHECK(it != produced_by_.end()) << "unknown loop " << node << " of " << s_.name;
  const sched::Split& sp = s_.splits[it->second];
  if (sp.kind == SplitKind::fuse) {
    Extent o = extent(sp.outer, ctx), i = extent(sp.inner, ctx);
    std::optional<int64_t> nominal;
    if (o.nominal && i.nominal) nominal = *o.nominal * *i.nominal;
    return {ir::simplify(o.expr * i.expr), o.exact && i.exact, nominal};
  }
  const int64_t f = sp.factor;
  const Extent pe = extent(sp.parent, ctx);
  if (node == sp.outer) {
    std::optional<int64_t> nominal;
    if (pe.nominal) nominal = (*pe.nominal + f - 1) / f;
    Expr e = ir::simplify((pe.expr + ir::i64(f - 1)) / ir::i64(f));
    return {e, pe.exact, nominal};
  }
  const int64_t nom = pe.nominal ? std::min(f, *pe.nominal) : f;
  if (ctx.full.count(it->second)) return {ir::i64(f), pe.exact, f};
  if (auto c = ir::as_const_int(pe.expr)) {
    if (*c % f == 0) return {ir::i64(f), pe.exact, f};
    if (*c < f) return {ir::i64(*c), pe.exact, *c};
  }
  if (all_bound(sp.outer, ctx)) {
    Expr rest = simplify_linear(pe.expr - value(sp.outer, ctx) * ir::i64(f));
    return {ir::min(ir::i64(f), rest), pe.exact, nom};
  }
  return {ir::i64(nom), false, nom};
}

Expr LoopTree::value(const std::string& node, const NestContext& ctx) const {
  if (auto v = ctx.leaf_values.find(node); v != ctx.leaf_values.end()) return v->second;
  if (is_leaf(node)) return ir::Var::make(ir::Type::i64(), var_name(node));
  auto it = consumed_by_.find(node);
  KF_CHECK(it != consumed_by_.end()) << "loop " << node << " of " << s_.name << " has no value";
  const sched::Split& sp = s_.splits[it->second];
  if (sp.kind == SplitKind::split)
    return value(sp.outer, ctx) * ir::i64(sp.factor) + value(sp.inner, ctx);
  Expr fused = value(sp.parent, ctx);
  Expr inner_extent = extent(sp.inner, ctx).expr;
  return node == sp.outer ? fused / inner_extent : fused % inner_extent;
}

Expr LoopTree::root_value(int root, const NestContext& ctx) const {
  const TreeRoot& r = roots_[root];
  Expr v = value(r.name, ctx);
  return ir::simplify(ir::is_const(r.min, 0) ? v : r.min + v);
}

Interval LoopTree::range(const std::string& node, const NestContext& ctx) const {
  if (all_bound(node, ctx)) return Interval::point(value(node, ctx));
  const Extent e = extent(node, ctx);
  if (none_bound(node, ctx)) return {ir::i64(0), simplify_linear(e.expr - ir::i64(1)), e.exact};
  auto it = consumed_by_.find(node);
  KF_CHECK(it != consumed_by_.end()) << "partly bound leaf " << node;
  const sched::Split& sp = s_.splits[it->second];
  if (sp.kind == SplitKind::fuse)
    return {ir::i64(0), simplify_linear(e.expr - ir::i64(1)), e.exact};
  const Expr f = ir::i64(sp.factor);
  const Interval ri = range(sp.inner, ctx);
  if (all_bound(sp.outer, ctx)) {
    Expr base = value(sp.outer, ctx) * f;
    return {simplify_linear(base + ri.min), simplify_linear(base + ri.max), ri.exact};
  }
  const Interval ro = range(sp.outer, ctx);
  Expr hi = ir::min(simplify_linear(ro.max * f + ri.max), simplify_linear(e.expr - ir::i64(1)));
  return {simplify_linear(ro.min * f + ri.min), hi, false};
}

Interval LoopTree::root_range(int root, const NestContext& ctx) const {
  const TreeRoot& r = roots_[root];
  Interval i = range(r.name, ctx);
  if (ir::is_const(r.min, 0)) return i;
  return {simplify_linear(r.min + i.min), simplify_linear(r.min + i.max), i.exact};
}

}  // namespace kf::lowering
