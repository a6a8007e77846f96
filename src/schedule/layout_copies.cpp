// make_pipeline's last normalization: a stage that only copies an input in another order of its
// dims (Bt[k, j] = B[j, k]) and is read only by reductions is substituted into its readers.
//
// Such a stage names a layout, not a computation, and the layout a reduction reads its operand
// in is the schedule's choice: cache_read with reorder_storage packs it where it pays (a panel
// per tile, not the whole matrix at root). Substituted, `C = A Bt` written with the stage and
// `C = A B^T` written directly are one pipeline, and every schedule, move and cost estimate sees
// them alike. A copy read by anything but a reduction (an elementwise reader, an output) stays:
// there the copy may be the point.
#include <algorithm>

#include "schedule/pipeline.h"
#include "schedule/te_util.h"

namespace kf::sched {
namespace {

using te::Expr;
using te::ExprKind;
using te::RefKind;

// Whether s is B[v...] with its own variables, each once, each over B's whole dim.
bool layout_copy(const Pipeline& p, const Stage& s) {
  if (s.output >= 0 || s.reduction || s.is_recurrence() || s.where || s.vars.empty()) return false;
  const Expr& b = s.body;
  if (b.kind != ExprKind::access || b.ref.kind != RefKind::input || b.has_else) return false;
  const TensorSpec& in = p.task->inputs[static_cast<size_t>(b.ref.index)];
  if (b.index_count() != s.vars.size() || in.shape.size() != s.vars.size()) return false;
  std::vector<bool> seen(s.vars.size(), false);
  for (size_t d = 0; d < b.index_count(); ++d) {
    const Expr& a = b.args[d];
    if (a.kind != ExprKind::name || a.ref.kind != RefKind::index_var) return false;
    const auto v = static_cast<size_t>(a.ref.index);
    if (v >= seen.size() || seen[v]) return false;
    seen[v] = true;
    if (!index_within(a, s.vars, formula_to_te(in.shape[d], *p.task))) return false;
  }
  return true;
}

// The read `x` of copy stage `s` (x's indices name s's variables) as a read of s's input.
Expr through_copy(const Stage& s, const Expr& x) {
  Expr r = s.body;
  for (size_t d = 0; d < r.index_count(); ++d)
    r.args[d] = x.args[static_cast<size_t>(s.body.args[d].ref.index)];
  if (x.has_else) {
    r.has_else = true;
    r.args.push_back(x.args.back());
  }
  r.loc = x.loc;
  return r;
}

}  // namespace

void substitute_layout_copies(Pipeline& p) {
  for (int i = static_cast<int>(p.stages.size()) - 1; i >= 0; --i) {
    if (!layout_copy(p, p.stages[static_cast<size_t>(i)])) continue;
    const Stage copy = p.stages[static_cast<size_t>(i)];  // kept past its removal below
    const std::vector<int> readers = p.readers(i);
    if (readers.empty() || !std::all_of(readers.begin(), readers.end(), [&](int r) {
          return p.stages[static_cast<size_t>(r)].reduction;
        }))
      continue;
    for (int r : readers) {
      Stage& s = p.stages[static_cast<size_t>(r)];
      s.body = map_accesses(s.body, [&](const Expr& x) -> std::optional<Expr> {
        if (x.ref.kind != RefKind::stage || x.ref.index != i) return std::nullopt;
        return through_copy(copy, x);
      });
    }
    p.remove_stage(i);
    p.substituted.push_back(copy.name);
  }
}

}  // namespace kf::sched
