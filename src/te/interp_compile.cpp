// Expression -> evaluator tree, at one shape (see interp_compile.h).
#include "te/interp_compile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "te/interp_exec.h"
#include "te/ops.h"
#include "te/static_eval.h"

namespace kf::te::detail {
namespace {

std::string where(const std::string& file, const Expr& e) {
  return quote_expr(e) + " at " + file + ":" + std::to_string(e.loc.line) + ":" +
         std::to_string(e.loc.col);
}

struct Interval {
  int64_t lo, hi;  // inclusive
};

class StageCompiler {
 public:
  StageCompiler(const CompileEnv& env, int si)
      : env_(env), stage_(env.program.stages[si]), nvars_(static_cast<int>(stage_.vars.size())) {}

  Expected<NodePtr> run() {
    ranges_.assign(nvars_ + stage_.reduce_vars.size(), std::nullopt);
    for (int i = 0; i < nvars_; ++i) {
      auto hi = eval_static_int(stage_.vars[i].hi, env_.shape.env);
      if (!hi) return hi.error();
      ranges_[i] = std::make_pair(int64_t{0}, *hi);
    }
    for (size_t r = 0; r < stage_.reduce_vars.size(); ++r) {
      const IndexVar& v = stage_.reduce_vars[r];
      if (!v.is_static) continue;
      auto lo = eval_static_int(v.lo, env_.shape.env);
      auto hi = eval_static_int(v.hi, env_.shape.env);
      if (!lo) return lo.error();
      if (!hi) return hi.error();
      ranges_[nvars_ + r] = std::make_pair(*lo, *hi);
    }
    return compile(stage_.body, nvars_ > 0 ? nvars_ - 1 : -1);
  }

 private:
  int slot_of(const Expr& name) const {
    return name.ref.kind == RefKind::index_var ? name.ref.index : nvars_ + name.ref.index;
  }
  bool is_var(const Expr& e) const {
    return e.kind == ExprKind::name &&
           (e.ref.kind == RefKind::index_var || e.ref.kind == RefKind::reduce_var);
  }
  double param(const Expr& e) const {
    auto it = env_.shape.env.find(e.name);
    KF_CHECK(it != env_.shape.env.end()) << "no value for " << e.name;
    return it->second;
  }

  // The slots `e` reads that are bound outside it.
  void deps(const Expr& e, std::set<int>& out) const {
    if (is_var(e)) out.insert(slot_of(e));
    for (const Expr& a : e.args) deps(a, out);
    if (e.kind != ExprKind::reduce) return;
    for (int r : e.rvars) {
      deps(stage_.reduce_vars[r].lo, out);
      deps(stage_.reduce_vars[r].hi, out);
    }
    for (int r : e.rvars) out.erase(nvars_ + r);
  }

  static bool expensive(const Expr& e) {
    bool yes = false;
    visit(e, [&](const Expr& x) {
      if (x.kind == ExprKind::reduce) yes = true;
      if (x.kind == ExprKind::call && is_costly(x.op)) yes = true;
    });
    return yes;
  }

  // `innermost`: the slot of the innermost loop around `e` (-1: do not memoize here).
  Expected<NodePtr> compile(const Expr& e, int innermost) {
    if (innermost >= 0 && (e.kind == ExprKind::call || e.kind == ExprKind::reduce) &&
        expensive(e)) {
      std::set<int> d;
      deps(e, d);
      if (!d.count(innermost)) {
        auto inner = compile_node(e, -1);
        if (!inner) return inner;
        if ((*inner)->constant()) return inner;
        return NodePtr(new Cached(std::move(*inner), std::vector<int>(d.begin(), d.end())));
      }
    }
    return compile_node(e, innermost);
  }

  Expected<NodePtr> compile_node(const Expr& e, int innermost) {
    switch (e.kind) {
      case ExprKind::number:
        return NodePtr(new Const(e.number));
      case ExprKind::name:
        if (is_var(e)) return NodePtr(new Slot(slot_of(e)));
        return NodePtr(new Const(param(e)));
      case ExprKind::access:
        return access(e, innermost);
      case ExprKind::call:
        return call(e, innermost);
      case ExprKind::reduce:
        return reduce(e);
    }
    KF_CHECK(false) << "unknown expression kind";
    return NodePtr();
  }

  Expected<NodePtr> call(const Expr& e, int innermost) {
    std::vector<NodePtr> args;
    bool all_const = true;
    for (const Expr& a : e.args) {
      auto n = compile(a, innermost);
      if (!n) return n;
      all_const &= (*n)->constant() != nullptr;
      args.push_back(std::move(*n));
    }
    const bool integer = e.type == ValueType::i64 || (e.op == Op::ceildiv);
    const bool may_fail = integer && (e.op == Op::div || e.op == Op::mod || e.op == Op::ceildiv);
    if (all_const && !may_fail && e.op != Op::select) {
      const double a = *args[0]->constant();
      if (args.size() == 1) return NodePtr(new Const(apply_unary(e.op, a, e.cast_to)));
      return NodePtr(new Const(apply_binary(e.op, a, *args[1]->constant(), integer)));
    }
    return make_call(e, std::move(args), integer, env_.program.file);
  }

  // Affine form of an integer index, or nullopt.
  std::optional<Affine> affine(const Expr& e) const {
    Affine a;
    if (e.kind == ExprKind::number) {
      a.c = static_cast<int64_t>(e.number);
      return a;
    }
    if (e.kind == ExprKind::name) {
      if (is_var(e)) {
        a.terms.push_back({slot_of(e), 1});
        return a;
      }
      a.c = static_cast<int64_t>(param(e));
      return a;
    }
    if (e.kind != ExprKind::call) return std::nullopt;
    if (e.op == Op::neg) {
      auto x = affine(e.args[0]);
      if (x) scale(*x, -1);
      return x;
    }
    if (e.op != Op::add && e.op != Op::sub && e.op != Op::mul) return std::nullopt;
    auto x = affine(e.args[0]), y = affine(e.args[1]);
    if (!x || !y) return std::nullopt;
    if (e.op == Op::mul) {
      if (!x->terms.empty() && !y->terms.empty()) return std::nullopt;
      if (x->terms.empty()) std::swap(x, y);
      scale(*x, y->c);
      return x;
    }
    if (e.op == Op::sub) scale(*y, -1);
    x->c += y->c;
    for (const auto& t : y->terms) x->terms.push_back(t);
    return x;
  }
  static void scale(Affine& a, int64_t k) {
    a.c *= k;
    for (auto& t : a.terms) t.second *= k;
  }

  // The values `a` takes over the known ranges; nullopt when some range is unknown. `empty`
  // is set when some range is empty (the access never runs).
  std::optional<Interval> bounds(const Affine& a, bool& empty) const {
    Interval r{a.c, a.c};
    for (const auto& [s, k] : a.terms) {
      if (!ranges_[s]) return std::nullopt;
      const auto [lo, hi] = *ranges_[s];
      if (hi <= lo) {
        empty = true;
        continue;
      }
      r.lo += k > 0 ? k * lo : k * (hi - 1);
      r.hi += k > 0 ? k * (hi - 1) : k * lo;
    }
    return r;
  }

  const TensorView& view(const Expr& e) const {
    return e.ref.kind == RefKind::input ? env_.inputs[e.ref.index] : env_.stages[e.ref.index];
  }

  Expected<NodePtr> access(const Expr& e, int innermost) {
    const TensorView& v = view(e);
    const size_t n = e.index_count();
    NodePtr fallback;
    if (e.has_else) {
      auto f = compile(e.args.back(), innermost);
      if (!f) return f;
      fallback = std::move(*f);
    }
    AccessInfo info{v.data, v.extents, where(env_.program.file, e), v.name};
    std::vector<int64_t> strides(n, 1);
    for (size_t d = n; d-- > 1;) strides[d - 1] = strides[d] * v.extents[d];
    std::vector<std::optional<Affine>> forms;
    bool all_affine = true;
    for (size_t d = 0; d < n; ++d) {
      forms.push_back(affine(e.args[d]));
      all_affine &= forms.back().has_value();
    }
    if (all_affine) {
      Affine offset;
      std::vector<DimCheck> checks;
      for (size_t d = 0; d < n; ++d) {
        const Affine& a = *forms[d];
        offset.c += strides[d] * a.c;
        for (const auto& [s, k] : a.terms) {
          auto it = std::find_if(offset.terms.begin(), offset.terms.end(),
                                 [&](const auto& t) { return t.first == s; });
          if (it == offset.terms.end()) {
            offset.terms.push_back({s, strides[d] * k});
          } else {
            it->second += strides[d] * k;
          }
        }
        bool empty = false;
        auto b = bounds(a, empty);
        const bool proven = empty || (b && b->lo >= 0 && b->hi < v.extents[d]);
        if (!proven) checks.push_back({a, v.extents[d], static_cast<int>(d)});
      }
      return make_affine_access(std::move(info), std::move(offset), std::move(checks),
                                std::move(fallback));
    }
    std::vector<NodePtr> idx;
    for (size_t d = 0; d < n; ++d) {
      auto x = compile(e.args[d], innermost);
      if (!x) return x;
      idx.push_back(std::move(*x));
    }
    return make_general_access(std::move(info), std::move(strides), std::move(idx),
                               std::move(fallback));
  }

  Expected<NodePtr> reduce(const Expr& e) {
    std::vector<ReduceLoop> loops;
    for (int r : e.rvars) {
      const IndexVar& v = stage_.reduce_vars[r];
      ReduceLoop l;
      l.slot = nvars_ + r;
      auto lo = compile(v.lo, -1);
      if (!lo) return lo;
      auto hi = compile(v.hi, -1);
      if (!hi) return hi;
      l.lo = std::move(*lo);
      l.hi = std::move(*hi);
      loops.push_back(std::move(l));
    }
    auto body = compile(e.args[0], loops.back().slot);
    if (!body) return body;
    return make_reduce(e.reduce_op, std::move(loops), std::move(*body));
  }

  const CompileEnv& env_;
  const Stage& stage_;
  const int nvars_;
  std::vector<std::optional<std::pair<int64_t, int64_t>>> ranges_;  // per slot, when static
};

}  // namespace

Expected<std::vector<int64_t>> stage_extents(const CompileEnv& env, int si) {
  std::vector<int64_t> ext;
  for (const IndexVar& v : env.program.stages[si].vars) {
    auto hi = eval_static_int(v.hi, env.shape.env);
    if (!hi) return hi.error();
    if (*hi < 0)
      return Status::error("the extent " + to_string(v.hi) + " of " + quote_expr_name(v.name) +
                           " is negative (" + std::to_string(*hi) + ")");
    ext.push_back(*hi);
  }
  return ext;
}

Expected<NodePtr> compile_stage(const CompileEnv& env, int si) {
  return StageCompiler(env, si).run();
}

}  // namespace kf::te::detail
