// Semantic analysis driver: one stage per statement, in order (see sema.h).
#include "te/sema.h"

#include <algorithm>
#include <map>

#include "te/lexer.h"
#include "te/sema_internal.h"
#include "te/static_eval.h"

namespace kf::te {
namespace {

using detail::quote;
using detail::StageContext;

std::string loc_text(SourceLoc l) {
  return std::to_string(l.line) + ":" + std::to_string(l.col);
}

class Checker {
 public:
  Checker(const Ast& ast, const Task& task, const std::string& file)
      : ast_(ast), task_(task), file_(file) {
    std::vector<ShapePoint> points = task.tests;
    points.push_back(task.bench);
    for (const ShapePoint& p : points)
      if (auto inst = task.instantiate(p)) shapes_.push_back(inst->env);
  }

  Expected<Program> run() {
    Program p;
    p.file = file_;
    std::multiset<std::string> pending;
    for (const Statement& st : ast_.statements) pending.insert(st.target);
    std::vector<bool> used;
    for (const Statement& st : ast_.statements) {
      pending.erase(pending.find(st.target));
      const std::set<std::string> later(pending.begin(), pending.end());
      auto stage = check_statement(st, p.stages, later, used);
      if (!stage) return stage.error();
      p.stages.push_back(std::move(*stage));
      used.push_back(false);
    }
    for (size_t i = 0; i < p.stages.size(); ++i)
      if (p.stages[i].output < 0 && !used[i])
        return error_at(file_, p.stages[i].loc,
                        "intermediate " + quote(p.stages[i].name) +
                            " is never used: expected it to feed an output (use or remove it)");
    p.output_stage.assign(task_.outputs.size(), -1);
    for (size_t i = 0; i < p.stages.size(); ++i)
      if (p.stages[i].output >= 0) p.output_stage[p.stages[i].output] = static_cast<int>(i);
    for (size_t j = 0; j < task_.outputs.size(); ++j)
      if (p.output_stage[j] < 0)
        return error_at(file_, ast_.start,
                        "output " + quote(task_.outputs[j].name) +
                            " is never assigned: expected a statement '" + task_.outputs[j].name +
                            "[...] = ...'");
    return p;
  }

 private:
  Status err(SourceLoc at, const std::string& msg) const { return error_at(file_, at, msg); }

  // What a name already means at the top level, or "".
  std::string meaning(const std::string& n) const {
    if (std::find(task_.dims.begin(), task_.dims.end(), n) != task_.dims.end()) return "a dim";
    for (const auto& d : task_.derived)
      if (d.first == n) return "a derived size";
    for (const auto& s : task_.scalars)
      if (s.name == n) return "a scalar";
    for (const auto& t : task_.inputs)
      if (t.name == n) return "an input tensor";
    for (const auto& t : task_.outputs)
      if (t.name == n) return "an output tensor";
    return "";
  }

  int output_index(const std::string& n) const {
    for (size_t j = 0; j < task_.outputs.size(); ++j)
      if (task_.outputs[j].name == n) return static_cast<int>(j);
    return -1;
  }

  Status check_target(const Statement& st, const std::vector<Stage>& earlier) const {
    for (const auto& t : task_.inputs)
      if (t.name == st.target)
        return err(st.loc, quote(st.target) +
                               " is an input: a statement may assign only an "
                               "output or a new intermediate");
    for (const Stage& s : earlier)
      if (s.name == st.target)
        return err(st.loc, quote(st.target) + " is already defined at " + loc_text(s.loc) +
                               ": each tensor is assigned by one statement");
    const std::string m = meaning(st.target);
    if (!m.empty() && output_index(st.target) < 0)
      return err(st.loc, quote(st.target) + " is " + m + ": expected a tensor name");
    return ok_status();
  }

  // Builds the LHS index variables; `known[i]` when var i's range is fixed already.
  Status lhs_vars(const Statement& st, Stage& s, std::vector<bool>& known) const {
    if (s.output >= 0) {
      const TensorSpec& out = task_.outputs[s.output];
      if (st.lhs.size() != out.shape.size())
        return err(st.loc, "output " + quote(s.name) + " has " + std::to_string(out.shape.size()) +
                               " dimensions: expected " + std::to_string(out.shape.size()) +
                               " indices on the left-hand side, got " +
                               std::to_string(st.lhs.size()));
    }
    for (size_t i = 0; i < st.lhs.size(); ++i) {
      const VarDecl& d = st.lhs[i];
      if (std::string m = meaning(d.name); !m.empty())
        return err(d.loc, quote(d.name) + " is " + m + ": an index variable needs a new name");
      for (size_t j = 0; j < i; ++j)
        if (st.lhs[j].name == d.name)
          return err(d.loc,
                     "index variable " + quote(d.name) + " appears twice on the left-hand side");
      IndexVar v;
      v.name = d.name;
      v.loc = d.loc;
      if (s.output >= 0) {
        if (!d.bounds.empty())
          return err(d.loc, "output " + quote(s.name) +
                                " takes its index ranges from its declared "
                                "shape: remove 'in ...'");
        v.lo.kind = ExprKind::number;
        v.lo.type = ValueType::i64;
        v.hi = detail::formula_expr(task_, task_.outputs[s.output].shape[i], d.loc);
        known.push_back(true);
      } else if (!d.bounds.empty()) {
        v.lo = d.bounds[0];
        v.hi = d.bounds[1];
        KF_RETURN_IF_ERROR(detail::resolve_static(task_, file_, v.lo));
        KF_RETURN_IF_ERROR(detail::resolve_static(task_, file_, v.hi));
        if (v.lo.kind != ExprKind::number || v.lo.number != 0)
          return err(v.lo.loc,
                     "a left-hand side range starts at 0: expected '" + d.name + " in 0..N'");
        if (v.hi.type != ValueType::i64)
          return err(v.hi.loc, "expected an integer size, got " + quote(to_string(v.hi)));
        known.push_back(true);
      } else {
        known.push_back(false);
      }
      s.vars.push_back(std::move(v));
    }
    return ok_status();
  }

  Status check_recurrence(Stage& s, const std::vector<const Expr*>& reads) const {
    for (const Expr* r : reads) {
      int scan = -1;
      for (size_t d = 0; d < r->index_count(); ++d) {
        const Expr& x = r->args[d];
        const auto is_var = [&](const Expr& v) {
          return v.kind == ExprKind::name && v.ref.kind == RefKind::index_var &&
                 v.ref.index == static_cast<int>(d);
        };
        if (is_var(x)) continue;
        const bool back = x.kind == ExprKind::call && x.op == Op::sub && is_var(x.args[0]) &&
                          x.args[1].kind == ExprKind::number && x.args[1].type == ValueType::i64 &&
                          x.args[1].number > 0;
        if (!back || scan >= 0)
          return err(x.loc, "a recurrence reads its own earlier elements only as " + s.name +
                                "[..., t - C, ...]: every index the left-hand side's variable in "
                                "its position, one of them minus a positive integer constant");
        scan = static_cast<int>(d);
      }
      if (scan < 0)
        return err(r->loc, quote(s.name) +
                               " reads the element it defines: a recurrence reads an "
                               "earlier element such as " +
                               s.name + "[t - 1, ...]");
      if (!r->has_else)
        return err(r->loc, "a recurrence read needs a value for the first elements: expected '" +
                               to_string(*r) + " else 0' (or another value)");
      if (s.scan_dim >= 0 && s.scan_dim != scan)
        return err(r->loc, quote(s.name) + " reads itself along two dimensions (" +
                               s.vars[s.scan_dim].name + " and " + s.vars[scan].name +
                               "): expected one");
      s.scan_dim = scan;
    }
    return ok_status();
  }

  Expected<Stage> check_statement(const Statement& st, const std::vector<Stage>& earlier,
                                  const std::set<std::string>& later, std::vector<bool>& used) {
    KF_RETURN_IF_ERROR(check_target(st, earlier));
    Stage s;
    s.name = st.target;
    s.loc = st.loc;
    s.output = output_index(st.target);
    s.type = s.output >= 0 && !is_floating(task_.outputs[s.output].dtype) ? ValueType::i64
                                                                          : ValueType::f64;
    std::vector<bool> known;
    KF_RETURN_IF_ERROR(lhs_vars(st, s, known));
    s.body = st.body;
    StageContext c{task_, file_, earlier, later, shapes_, s};
    KF_RETURN_IF_ERROR(detail::resolve_expr(c, s.body));
    if (s.body.type == ValueType::boolean)
      return err(s.body.loc, "expected a number on the right-hand side, got the condition " +
                                 quote(to_string(s.body)) + "; use select(cond, a, b)");
    if (s.output >= 0 && s.type == ValueType::i64 && s.body.type != ValueType::i64) {
      const std::string dt(dtype_name(task_.outputs[s.output].dtype));
      return err(s.body.loc, "output " + quote(s.name) + " has dtype " + dt +
                                 ": expected an integer expression, got a float one; convert "
                                 "with " +
                                 dt + "(...)");
    }
    if (s.output < 0) s.type = s.body.type;
    KF_RETURN_IF_ERROR(detail::infer_ranges(c, known));
    KF_RETURN_IF_ERROR(check_recurrence(s, c.self_reads));
    for (int i : c.stages_read) used[i] = true;
    return s;
  }

  const Ast& ast_;
  const Task& task_;
  const std::string& file_;
  std::vector<Bindings> shapes_;
};

}  // namespace

Expected<Program> check(const Ast& ast, const Task& task, const std::string& file) {
  return Checker(ast, task, file).run();
}

}  // namespace kf::te
