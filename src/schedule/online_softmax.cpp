// The `online_softmax M` primitive: the softmax's max pass and sum pass become one pass. A row
// maximum M and the normalizer that divides by it,
//
//   m[i]     = max(j in R: s[i, j])
//   pe[i, j] = exp(s[i, j] - m[i])
//   den[i]   = sum(j in R: pe[i, j])
//   o[i, d]  = sum(j in R: pe[i, j] * v[j, d]) / den[i]
//
// become a logsumexp, whose generated code keeps a running maximum and rescales the running sum
// each time the maximum grows (one pass, one exp per value), and whose value already holds the
// normalizer: exp(s - logsumexp(s)) = exp(s - max) / sum(exp(s - max)). So
//
//   m[i]     = logsumexp(j in R: s[i, j])        (m's name is kept; it now holds max + log(den))
//   pe[i, j] = exp(s[i, j] - m[i])               (unchanged: now the probabilities)
//   o[i, d]  = sum(j in R: pe[i, j] * v[j, d])   (den is gone, and the division with it)
//
// A row was read three times (max, sum, use); now twice. The same rewrite turns the
// log-sum-exp idiom `m + log(sum(j: exp(s - m)))` into m alone.
//
// The rewrite is exact in real arithmetic only where every reader stays equal under
// m -> m + log(den), den -> 1, so it is refused unless each reader of m, of an exp stage pe and
// of a normalizer den uses them in one of these forms:
//   - den = sum(j in R: pe[row, j]) or sum(j in R: exp(s - m[row])), R being m's range (removed);
//   - pe = exp(X - m[row]) with X m's operand (kept);
//   - F / den[row] with F linear in pe reads of that row: products and quotients by terms free
//     of m, pe and den, sums, sum reductions, selects with free conditions (the division goes);
//   - m[row] + log(den[row]) (becomes m[row]).
// Neither m, pe nor den may be a task output; m's reduction loop must be unsplit; no stage may be
// computed at a loop of den or at m's reduction loop.
#include <algorithm>
#include <map>
#include <set>

#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"

namespace kf::sched::detail {
namespace {

using te::Expr;
using te::ExprKind;
using te::Op;

bool is_call(const Expr& e, Op op) {
  return e.kind == ExprKind::call && e.op == op;
}

bool is_access_of(const Expr& e, int stage) {
  return e.kind == ExprKind::access && e.ref.kind == te::RefKind::stage && e.ref.index == stage;
}

std::string text(const Expr& e, const Stage& s) {
  te::Stage view;
  view.reduce_vars = s.reduce_vars;
  return te::to_string(e, &view);
}

// e's text with stage s's index vars below `row` named $v0, $v1, ..., the others and reduction
// var `rv` named $j: the same text means the same function of (row, j) in two stages.
std::string canon(const Expr& e, const Stage& s, size_t row, int rv) {
  Expr c = map_names(e, [&](const Expr& n) -> std::optional<Expr> {
    Expr r = n;
    if (n.ref.kind == te::RefKind::index_var) {
      const auto d = static_cast<size_t>(n.ref.index);
      r.name = d < row ? "$v" + std::to_string(d) : "$j";
      return r;
    }
    if (n.ref.kind == te::RefKind::reduce_var && n.ref.index == rv) {
      r.name = "$j";
      return r;
    }
    return std::nullopt;
  });
  return text(c, s);
}

// The first n indices of an access, as text in stage s.
std::string row_of(const Expr& access, size_t n, const Stage& s) {
  std::string r;
  for (size_t i = 0; i < n && i < access.index_count(); ++i) r += text(access.args[i], s) + ",";
  return r;
}

// Whether the first n indices of an access are stage s's first n vars, in order.
bool reads_own_row_prefix(const Expr& access, size_t n, const Stage& s) {
  if (access.index_count() < n || s.vars.size() < n) return false;
  for (size_t d = 0; d < n; ++d) {
    const Expr& i = access.args[d];
    if (i.kind != ExprKind::name || i.ref.kind != te::RefKind::index_var ||
        i.ref.index != static_cast<int>(d))
      return false;
  }
  return true;
}

struct Pattern {
  int m = -1;
  size_t row = 0;             // m's dims
  std::string x;              // m's operand, canonical
  std::string lo, hi;         // m's range, as text
  std::set<int> exps, norms;  // the pe stages and the den stages

  // exp(A - m[row]) in stage s (row: s's first vars) with A the same function of (row, j) as
  // m's operand, j being s's reduction var rv, or its var past the row when rv < 0.
  bool exp_term(const Expr& e, const Stage& s, int rv) const {
    if (!is_call(e, Op::exp) || !is_call(e.args[0], Op::sub)) return false;
    const Expr& sub = e.args[0];
    return is_access_of(sub.args[1], m) && sub.args[1].index_count() == row &&
           reads_own_row_prefix(sub.args[1], row, s) && canon(sub.args[0], s, row, rv) == x;
  }

  bool touches(const Expr& e) const {
    bool t = false;
    te::visit(e, [&](const Expr& y) {
      if (y.kind != ExprKind::access || y.ref.kind != te::RefKind::stage) return;
      t = t || y.ref.index == m || exps.count(y.ref.index) || norms.count(y.ref.index);
    });
    return t;
  }

  // Whether e is linear in reads of the exp stages at `row` (and reads nothing else of the
  // pattern): scaling every such read by c scales e by c.
  bool linear(const Expr& e, const std::string& row_text, const Stage& s) const {
    auto lin_or_zero = [&](const Expr& a) {
      return linear(a, row_text, s) || (a.kind == ExprKind::number && a.number == 0);
    };
    if (e.kind == ExprKind::access && e.ref.kind == te::RefKind::stage && exps.count(e.ref.index))
      return !e.has_else && row_of(e, row, s) == row_text;
    if (e.kind == ExprKind::reduce)
      return e.reduce_op == te::ReduceOp::sum && linear(e.args[0], row_text, s);
    if (e.kind != ExprKind::call) return false;
    switch (e.op) {
      case Op::mul:
        return (linear(e.args[0], row_text, s) && !touches(e.args[1])) ||
               (!touches(e.args[0]) && linear(e.args[1], row_text, s));
      case Op::div:
        return linear(e.args[0], row_text, s) && !touches(e.args[1]);
      case Op::neg:
        return linear(e.args[0], row_text, s);
      case Op::add:
      case Op::sub:
        return linear(e.args[0], row_text, s) && linear(e.args[1], row_text, s);
      case Op::select:
        return !touches(e.args[0]) && lin_or_zero(e.args[1]) && lin_or_zero(e.args[2]);
      default:
        return false;
    }
  }
};

// Rewrites one reader's expression; sets `error` (and returns e unchanged) on a use the rewrite
// cannot keep equal.
struct ReaderRewrite {
  const Pattern& pat;
  const Stage& s;
  std::string error;

  bool is_norm(const Expr& e) const {
    return e.kind == ExprKind::access && e.ref.kind == te::RefKind::stage &&
           pat.norms.count(e.ref.index) && !e.has_else;
  }

  Expr rw(const Expr& e) {
    if (!error.empty()) return e;
    if (is_call(e, Op::div) && is_norm(e.args[1])) {
      if (pat.linear(e.args[0], row_of(e.args[1], pat.row, s), s)) return e.args[0];
      error = s.name + " divides by " + e.args[1].name + " something that is not linear in " +
              "the exp stage's reads of that row: `" + text(e, s) + "`";
      return e;
    }
    if (is_call(e, Op::add)) {
      for (int side = 0; side < 2; ++side) {
        const Expr& lg = e.args[static_cast<size_t>(side)];
        const Expr& mx = e.args[static_cast<size_t>(1 - side)];
        if (is_call(lg, Op::log) && is_norm(lg.args[0]) && is_access_of(mx, pat.m) &&
            !mx.has_else && row_of(lg.args[0], pat.row, s) == row_of(mx, pat.row, s))
          return mx;  // m + log(den) is the logsumexp itself
      }
    }
    if (e.kind == ExprKind::access && e.ref.kind == te::RefKind::stage &&
        (e.ref.index == pat.m || pat.exps.count(e.ref.index) || pat.norms.count(e.ref.index))) {
      error = s.name + " reads " + e.name + " outside the forms the rewrite keeps equal (a " +
              "division of a linear term by the normalizer, or max + log(normalizer)): `" +
              text(e, s) + "`";
      return e;
    }
    Expr r = e;
    for (Expr& a : r.args) a = rw(a);
    return r;
  }
};

}  // namespace

Status apply_online_softmax(Pipeline& p, const Primitive& prim) {
  auto mi = find_stage(p, prim.args[0], false);
  if (!mi) return mi.error();
  const Stage& m = p.stages[static_cast<size_t>(*mi)];
  const Expr& body = m.body;
  if (body.kind != ExprKind::reduce || body.reduce_op != te::ReduceOp::max ||
      body.rvars.size() != 1 || body.args[0].type != te::ValueType::f64 || m.is_recurrence())
    return Status::error(m.name + " is not a row maximum: online_softmax needs a stage whose " +
                         "whole definition is a float max over one variable, got `" +
                         text(body, m) + "`");
  if (m.output >= 0)
    return Status::error(m.name + " is a task output: it would hold the logsumexp instead");
  if (m.where || m.where_split)
    return Status::error(m.name + " has an rfactor mask: apply online_softmax first");
  const int rv = body.rvars[0];
  const std::string rname = m.reduce_vars[static_cast<size_t>(rv)].name;
  for (const Loop& l : m.loops)
    if (l.reduce && l.name != rname)
      return Status::error(m.name + "'s reduction loop is split or fused (" + l.name +
                           "): apply online_softmax before scheduling it");
  for (const Stage& s : p.stages)
    if (s.compute.kind == ComputeKind::at && s.compute.stage == m.name && s.compute.loop == rname)
      return Status::error(s.name + " is computed at " + m.name + "." + rname +
                           ", the reduction loop that online_softmax removes");

  Pattern pat{*mi,
              m.vars.size(),
              canon(body.args[0], m, m.vars.size(), rv),
              text(m.reduce_vars[static_cast<size_t>(rv)].lo, m),
              text(m.reduce_vars[static_cast<size_t>(rv)].hi, m),
              {},
              {}};
  // The exp stages: pe[row..., j] = exp(X - m[row...]).
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    if (s.vars.size() == pat.row + 1 && !s.reduction && !s.is_recurrence() && !s.where &&
        pat.exp_term(s.body, s, -1))
      pat.exps.insert(static_cast<int>(i));
  }
  // The normalizers: den[row...] = sum(j in R: pe[row..., j]) or sum(j in R: exp(X - m[row...])).
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const Stage& s = p.stages[i];
    const Expr& b = s.body;
    if (s.vars.size() != pat.row || b.kind != ExprKind::reduce ||
        b.reduce_op != te::ReduceOp::sum || b.rvars.size() != 1 || s.where || s.where_split ||
        s.is_recurrence())
      continue;
    bool same_rows = true;
    for (size_t d = 0; d < pat.row; ++d) same_rows = same_rows && s.vars[d].name == m.vars[d].name;
    const te::IndexVar& v = s.reduce_vars[static_cast<size_t>(b.rvars[0])];
    if (!same_rows || text(v.lo, s) != pat.lo || text(v.hi, s) != pat.hi) continue;
    const Expr& t = b.args[0];
    // The sum of exp(X - m[row]) itself, or of pe[row, j] with j the sum's own variable.
    const bool exp_read = t.kind == ExprKind::access && t.ref.kind == te::RefKind::stage &&
                          pat.exps.count(t.ref.index) && !t.has_else &&
                          t.index_count() == pat.row + 1 && reads_own_row_prefix(t, pat.row, s) &&
                          t.args[pat.row].kind == ExprKind::name &&
                          t.args[pat.row].ref.kind == te::RefKind::reduce_var &&
                          t.args[pat.row].ref.index == b.rvars[0];
    const bool norm = exp_read || pat.exp_term(t, s, b.rvars[0]);
    if (norm) pat.norms.insert(static_cast<int>(i));
  }
  if (pat.norms.empty())
    return Status::error(m.name + " has no normalizer: no stage sums exp(X - " + m.name +
                         ") over its range (" + pat.lo + ".." + pat.hi + ")");
  for (int e : pat.exps)
    if (p.stages[static_cast<size_t>(e)].output >= 0)
      return Status::error(p.stages[static_cast<size_t>(e)].name +
                           " is a task output: it would hold normalized values instead");
  for (int d : pat.norms) {
    const Stage& s = p.stages[static_cast<size_t>(d)];
    if (s.output >= 0)
      return Status::error(s.name + " is a task output: online_softmax would remove it");
    for (const Stage& o : p.stages)
      if (o.compute.kind == ComputeKind::at && o.compute.stage == s.name)
        return Status::error(o.name + " is computed at a loop of " + s.name +
                             ", which online_softmax removes");
  }

  // Every other reader keeps its value under m -> m + log(den), den -> 1.
  std::map<int, Expr> bodies;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    const int si = static_cast<int>(i);
    if (si == *mi || pat.exps.count(si) || pat.norms.count(si)) continue;
    const Stage& s = p.stages[i];
    ReaderRewrite rw{pat, s, {}};
    bool in_ranges = (s.where && pat.touches(*s.where));
    for (const te::IndexVar& v : s.reduce_vars)
      in_ranges = in_ranges || pat.touches(v.lo) || pat.touches(v.hi);
    if (in_ranges)
      return Status::error(s.name + " reads " + m.name + " or its exp or normalizer stages in a " +
                           "range or mask");
    Expr nb = rw.rw(s.body);
    if (!rw.error.empty()) return Status::error(rw.error);
    if (pat.touches(s.body)) bodies[si] = std::move(nb);
  }

  for (auto& [si, nb] : bodies) p.stages[static_cast<size_t>(si)].body = std::move(nb);
  Stage& ms = p.stages[static_cast<size_t>(*mi)];
  ms.body.reduce_op = te::ReduceOp::logsumexp;
  ms.reduction = false;
  ms.loops.erase(
      std::remove_if(ms.loops.begin(), ms.loops.end(), [](const Loop& l) { return l.reduce; }),
      ms.loops.end());
  ms.note = ms.note.empty() ? "online_softmax" : ms.note + "; online_softmax";
  std::vector<int> gone(pat.norms.begin(), pat.norms.end());
  for (size_t k = gone.size(); k-- > 0;) {
    if (!p.readers(gone[k]).empty())
      return Status::error("internal: " + p.stages[static_cast<size_t>(gone[k])].name +
                           " is still read after online_softmax");
    p.remove_stage(gone[k]);
  }
  return ok_status();
}

}  // namespace kf::sched::detail
