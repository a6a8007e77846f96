// Index range inference and shape consistency (see sema_internal.h).
//
// A variable without a declared range takes the extent of the first tensor dimension it indexes
// as a whole index (a use inside an access with `else` counts only when there is no other).
// Every other such use must have the same extent: equal text, or equal values at every shape
// point of the task (so `P` and `H - R + 1` agree when P = H - R + 1). A variable whose range is
// declared (an output's shape, `v in 0..N`) may index a longer dimension (a prefix, as `g` in
// offs[g] with offs of extent G + 1): its range must fit the extent at every shape point.
#include "te/lexer.h"
#include "te/sema_internal.h"
#include "te/static_eval.h"

namespace kf::te::detail {
namespace {

bool same_extent(const Expr& a, const Expr& b, const std::vector<Bindings>& shapes) {
  if (to_string(a) == to_string(b)) return true;
  bool compared = false;
  for (const Bindings& env : shapes) {
    auto x = eval_static(a, env), y = eval_static(b, env);
    if (!x || !y) continue;
    if (*x != *y) return false;
    compared = true;
  }
  return compared;
}

Expr zero() {
  Expr e;
  e.kind = ExprKind::number;
  e.type = ValueType::i64;
  return e;
}

struct VarInfo {
  IndexVar* var;
  bool known;          // has a range before inference
  bool checkable;      // range is 0..static: compare uses with it
  std::string origin;  // where the range comes from
  std::string kind;    // "index" / "reduction variable"
};

// True when 0..hi lies within 0..extent at every shape point.
bool fits(const Expr& hi, const Expr& extent, const std::vector<Bindings>& shapes) {
  if (to_string(hi) == to_string(extent)) return true;
  for (const Bindings& env : shapes) {
    auto x = eval_static(hi, env), y = eval_static(extent, env);
    if (x && y && *x > *y) return false;
  }
  return true;
}

}  // namespace

Status infer_ranges(StageContext& c, const std::vector<bool>& lhs_known) {
  Stage& s = c.stage;
  auto info_of = [&](RefKind k, int i) -> VarInfo {
    if (k == RefKind::index_var) {
      const bool known = lhs_known[i];
      return {
          &s.vars[i], known, known,
          s.output >= 0 ? "the declared shape of output " + quote(s.name) : "its declared range",
          "index"};
    }
    IndexVar& v = s.reduce_vars[i];
    const bool known = c.explicit_range[i];
    const bool zero_based = v.lo.kind == ExprKind::number && v.lo.number == 0;
    return {&v, known, known && v.is_static && zero_based, "its declared range",
            "reduction variable"};
  };
  auto infer = [&](RefKind k, int i) -> Status {
    VarInfo info = info_of(k, i);
    if (info.known) return ok_status();
    const Use* first = nullptr;
    for (const bool soft : {false, true})
      for (const Use& u : c.uses)
        if (!first && u.var_kind == k && u.var == i && u.soft == soft) first = &u;
    if (!first)
      return error_at(c.file, info.var->loc,
                      "cannot infer the range of the " + info.kind + " " + quote(info.var->name) +
                          ": use it as a whole index of a tensor (as in X[" + info.var->name +
                          "]) or declare it as '" + info.var->name + " in 0..N'");
    info.var->lo = zero();
    info.var->hi = first->extent;
    info.var->is_static = true;
    return ok_status();
  };
  for (size_t i = 0; i < s.vars.size(); ++i)
    KF_RETURN_IF_ERROR(infer(RefKind::index_var, static_cast<int>(i)));
  for (size_t i = 0; i < s.reduce_vars.size(); ++i)
    KF_RETURN_IF_ERROR(infer(RefKind::reduce_var, static_cast<int>(i)));

  // Check every hard use against the variable's range.
  for (const Use& u : c.uses) {
    if (u.soft) continue;
    VarInfo info = info_of(u.var_kind, u.var);
    if (info.known && !info.checkable) continue;
    if (info.known ? fits(info.var->hi, u.extent, c.shapes)
                   : same_extent(info.var->hi, u.extent, c.shapes))
      continue;
    std::string origin = info.origin;
    if (!info.known) {
      for (const Use& f : c.uses)
        if (f.var_kind == u.var_kind && f.var == u.var && !f.soft) {
          origin = f.where;
          break;
        }
    }
    return error_at(c.file, u.loc,
                    "shape mismatch: " + quote(info.var->name) + " indexes " + u.where +
                        " of extent " + to_string(u.extent) + ", but its range is 0.." +
                        to_string(info.var->hi) + " from " + origin);
  }
  return ok_status();
}

}  // namespace kf::te::detail
