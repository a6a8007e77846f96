// Pipeline analysis for the mechanical forms and the planner: which stages are GEMM-like,
// register tiles, row reductions, transposable reads, inlining costs; and the facts the planner's
// rules read (pipeline_facts).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "schedule/primitives.h"
#include "schedule/te_util.h"
#include "te/ast.h"

namespace kf::agents::builtin {

using sched::ComputeKind;
using sched::LoopKind;
using sched::Pipeline;
using sched::Stage;

// Whether a (top-level) stage was produced by cache_write or cache_read, or is a zero-padded copy
// of phase_split (inlined, its reads would be guarded again: 28, 8.4 -> 460 ms).
bool is_cache_stage(const Stage& s) {
  return s.origin == sched::StageOrigin::cache_write ||
         s.origin == sched::StageOrigin::cache_read || s.origin == sched::StageOrigin::padded_copy;
}

// A pack whose storage puts another dim innermost than its inner loop (a weight panel stored
// transposed): lowering copies it in blocks transposed in registers (lower/transpose_copies);
// vectorizing its inner loop would turn each vector into a scatter instead.
bool transposing_pack(const Stage& s) {
  if (s.origin != sched::StageOrigin::cache_read || s.storage_order.empty() || s.loops.empty())
    return false;
  return s.vars[static_cast<size_t>(s.storage_order.back())].name != s.loops.back().name;
}

// Index of the stage that accumulates s (cache_write of s), or -1.
int accumulator_of(const Pipeline& p, const Stage& s) {
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (p.stages[i].origin == sched::StageOrigin::cache_write && p.stages[i].origin_of == s.name)
      return static_cast<int>(i);
  return -1;
}

namespace {
// `v / K` with K an integer constant of at least 16: the variable v, else "".
std::string blocked_var(const te::Expr& e) {
  if (e.kind != te::ExprKind::call || e.op != te::Op::div || e.args.size() != 2) return "";
  const te::Expr& v = e.args[0];
  const te::Expr& k = e.args[1];
  if (v.kind != te::ExprKind::name || k.kind != te::ExprKind::number || k.number < 16 ||
      k.number != static_cast<double>(static_cast<int64_t>(k.number)))
    return "";
  return v.name;
}

bool reads_name(const te::Expr& e, const std::string& v) {
  bool found = false;
  te::visit(e, [&](const te::Expr& n) { found |= n.kind == te::ExprKind::name && n.name == v; });
  return found;
}

// The variables index `e` moves with at unit stride (see AccessInfo::last_unit).
std::vector<std::string> unit_stride_vars(const te::Expr& e) {
  if (e.kind == te::ExprKind::name) return {e.name};
  if (e.kind != te::ExprKind::call || e.args.size() != 2) return {};
  if (e.op != te::Op::add && e.op != te::Op::sub) return {};
  std::vector<std::string> out;
  for (size_t side = 0; side < (e.op == te::Op::add ? 2u : 1u); ++side) {
    const te::Expr& v = e.args[side];
    if (v.kind == te::ExprKind::name && !reads_name(e.args[1 - side], v.name))
      out.push_back(v.name);
  }
  return out;
}
}  // namespace

std::vector<AccessInfo> accesses(const te::Expr& body) {
  std::vector<AccessInfo> out;
  te::visit(body, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access) return;
    AccessInfo a;
    a.tensor = x.name;
    a.kind = x.ref.kind;
    std::set<std::string> plainly;  // read other than as a blocked_var somewhere
    for (size_t d = 0; d < x.index_count(); ++d) {
      a.index_vars.push_back(x.args[d].kind == te::ExprKind::name ? x.args[d].name : "");
      const std::string b = blocked_var(x.args[d]);
      te::visit(x.args[d], [&](const te::Expr& n) {
        if (n.kind != te::ExprKind::name) return;
        a.uses.insert(n.name);
        if (n.name != b) plainly.insert(n.name);
      });
    }
    for (const std::string& v : a.uses)
      if (!plainly.count(v)) a.blocked.insert(v);
    if (x.index_count() > 0) a.last_unit = unit_stride_vars(x.args[x.index_count() - 1]);
    out.push_back(std::move(a));
  });
  return out;
}

bool gemm_like(const Stage& s) {
  if (!s.reduction || s.is_recurrence() || !computed(s) || s.where) return false;
  if (s.vars.size() < 2 || s.loop_rvars().empty()) return false;
  if (s.body.reduce_op != te::ReduceOp::sum) return false;
  // The last pure var must index some operand (the vector dimension of the tile).
  const std::string& j = s.vars.back().name;
  for (const auto& a : accesses(s.body))
    if (a.reads(j)) return true;
  return false;
}

// The column var of a register tile (its vectors): the stage's last pure var when some operand
// is unit-stride along it, else a pure var that is some operand's last index. A reduction lifted
// out of another (10's y_r[t, d, e] = sum(f: h[t, e, f] * w2[e, f, d])) has the enclosing
// reduction's var last: vectors along e would gather w2 and fill 8 of 16 lanes, along d they load
// w2's rows (the stage is then stored with d innermost, reorder_storage in the same step).
std::string tile_col_var(const Stage& s) {
  const std::string& last = s.vars.back().name;
  const auto acc = accesses(s.body);
  for (const auto& a : acc)
    if (!a.index_vars.empty() && a.index_vars.back() == last) return last;
  for (const auto& a : acc) {
    if (a.index_vars.empty()) continue;
    for (const auto& v : s.vars)
      if (v.name == a.index_vars.back()) return v.name;
  }
  return last;
}

// The coefficient of variable j in an index expression when the index is affine in j (j, j + kw,
// 2 * j - 1); none when j sits under a division, a modulo, a product with another variable or a
// read (a transposed convolution's (ow + 1 - e) / 2).
std::optional<int64_t> coefficient(const te::Expr& e, const std::string& j) {
  bool uses = false;
  te::visit(
      e, [&](const te::Expr& x) { uses = uses || (x.kind == te::ExprKind::name && x.name == j); });
  if (!uses) return 0;
  if (e.kind == te::ExprKind::name) return 1;
  if (e.kind != te::ExprKind::call || e.args.size() != 2) return std::nullopt;
  auto a = coefficient(e.args[0], j), b = coefficient(e.args[1], j);
  switch (e.op) {
    case te::Op::add:
      if (a && b) return *a + *b;
      return std::nullopt;
    case te::Op::sub:
      if (a && b) return *a - *b;
      return std::nullopt;
    case te::Op::mul: {
      auto ka = sched::const_int(e.args[0]), kb = sched::const_int(e.args[1]);
      if (ka && b) return *ka * *b;
      if (kb && a) return *a * *kb;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// The row var of a register tile: the innermost pure var (other than j) that the operands read
// along j do not depend on, so each vector loaded along j feeds one FMA per row of the tile
// (GEMM: i, which only A reads; convolution: the output channel, which only the weights read).
std::string tile_row_var(const Stage& s, const std::string& j) {
  const auto acc = accesses(s.body);
  for (size_t v = s.vars.size(); v-- > 0;) {
    const std::string& cand = s.vars[v].name;
    if (cand == j) continue;
    bool independent = true;
    for (const auto& a : acc)
      if (a.reads(j) && a.reads(cand)) independent = false;
    if (independent) return cand;
  }
  // Next, a var the j-reading operands read only in blocks (t / 64): rows of one tile within a
  // block share those operands' vectors (16's y_r2 over a chunk's rows t: each head's hs slice
  // stays in L1, where rows over heads h stream 8 slices 1 MB apart).
  for (size_t v = s.vars.size(); v-- > 0;) {
    const std::string& cand = s.vars[v].name;
    if (cand == j) continue;
    bool shared = true;
    for (const auto& a : acc)
      if (a.reads(j) && a.reads(cand) && !a.blocked.count(cand)) shared = false;
    if (shared) return cand;
  }
  for (size_t v = s.vars.size(); v-- > 0;)
    if (s.vars[v].name != j) return s.vars[v].name;
  return j;
}

// A GEMM-like stage a register tile applies to: its vectors along the column var j are plain
// loads. Every operand that reads j reads it in an index that is j plus terms free of it, and
// either as its last index (B[k, j], x[n, c, oh + kh, ow + kw], 46's res[n, k, p, q]) or as an
// input the tile packs transposed (nn.Linear's W[o, i]). A transposed convolution reads its
// input at (ow + 1 - e) / 2 (28: the tile gathered lane by lane and selected per lane, 0.17x of
// the naive schedule); 15's den_r = sum(j: abs(r[b, h, i, j])) would gather the intermediate r
// across its rows (two wasted tries at the reduced budget).
bool register_tileable(const Stage& s) {
  if (!gemm_like(s)) return false;
  const std::string j = tile_col_var(s);
  bool plain = true;
  te::visit(s.body, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.index_count() == 0) return;
    bool reads = false, all_plain_vars = true;
    for (size_t d = 0; d < x.index_count(); ++d) {
      const std::optional<int64_t> c = coefficient(x.args[d], j);
      plain = plain && c && (*c == 0 || *c == 1);
      reads = reads || !c || *c != 0;
      all_plain_vars = all_plain_vars && x.args[d].kind == te::ExprKind::name;
    }
    if (!reads) return;
    const bool last = coefficient(x.args[x.index_count() - 1], j) == std::optional<int64_t>(1);
    const bool packable = x.ref.kind == te::RefKind::input && all_plain_vars;
    plain = plain && (last || packable);
  });
  return plain;
}

// A register tile: the accumulator of register_block (cache_write of a reduction), or the
// reduction itself computed at an output's tile with unrolled rows and vector columns
// (register_block_epilogue).
bool register_tile(const Stage& s) {
  if (s.origin == sched::StageOrigin::cache_write) return true;
  return !is_cache_stage(s) && gemm_like(s) && s.compute.kind == ComputeKind::at &&
         has_kind(s, LoopKind::unrolled) && has_kind(s, LoopKind::vectorized);
}

// A row reduction: a reduction whose innermost variable indexes an operand's last dim.
bool row_reduction(const Stage& s) {
  if (!s.reduction || s.is_recurrence() || !computed(s) || s.where_split) return false;
  if (s.body.reduce_op == te::ReduceOp::argmax || s.body.reduce_op == te::ReduceOp::argmin)
    return false;
  if (s.loops.empty() || !s.loops.back().reduce) return false;
  const std::string& r = s.loops.back().name;
  for (const auto& a : accesses(s.body))
    if (!a.index_vars.empty() && a.index_vars.back() == r) return true;
  return false;
}

// A reduction computed inside s's definition (a range that moves with s's variables keeps it
// there: 01's m = max(j in 0..i + 1: s_r[b, h, i, j] / sqrt(D))) that runs as one scalar chain
// and would run as vector partial results (vectorize_reductions): over one variable, no
// reduction inside, and every read that moves with it reads consecutive elements (the variable
// is its last index), so the vectors are plain loads. o's sum over pe[.., j] * v[b, h, j, d]
// reads v across rows: o vectorizes along d instead.
bool inline_row_reduction(const Stage& s, int* cost) {
  if (!computed(s) || s.reduce_lanes != 0 || has_kind(s, LoopKind::vectorized)) return false;
  bool found = false;
  te::visit(s.body, [&](const te::Expr& x) {
    if ((s.reduction && &x == &s.body) || !sched::vectorizable_reduce(x)) return;
    const std::string& r = s.reduce_vars[static_cast<size_t>(x.rvars[0])].name;
    bool dense = true, reads = false;
    for (const auto& a : accesses(x.args[0])) {
      if (!a.reads(r)) continue;
      reads = true;
      dense &= !a.index_vars.empty() && a.index_vars.back() == r;
    }
    if (reads && dense) {
      found = true;
      // Over a whole dimension (15's q.k over d inside a select) it is the stage's main work;
      // over a moving range it is usually a row statistic beside the GEMMs (01's max and sum).
      const bool whole = s.reduce_vars[static_cast<size_t>(x.rvars[0])].is_static;
      if (cost) *cost = std::max(*cost, whole ? 100 : sched::expr_cost(x.args[0]));
    }
  });
  return found;
}
bool inline_row_reduction(const Stage& s) {
  return inline_row_reduction(s, nullptr);
}

// The input such a copy would store transposed: read with s's last var j in a dimension before
// its last and s's innermost loop, a reduction, last; and reused: some other var of s does not
// read it (01's rows i all read the same k; a norm's x[n, d], read once, would only double its
// traffic). An intermediate read that way (03's kn[b, j, h, c]) has no copy.
std::optional<AccessInfo> transposable_input(const Stage& s) {
  if (s.vars.empty() || s.loops.empty() || !s.loops.back().reduce) return std::nullopt;
  const std::string j = s.vars.back().name, r = s.loops.back().name;
  for (const auto& a : accesses(s.body)) {
    if (a.kind != te::RefKind::input || a.index_vars.size() < 2 || a.index_vars.back() != r)
      continue;
    if (std::find(a.index_vars.begin(), a.index_vars.end() - 1, j) == a.index_vars.end() - 1)
      continue;
    if (std::all_of(s.vars.begin(), s.vars.end(),
                    [&](const te::IndexVar& v) { return v.name == j || a.reads(v.name); }))
      continue;
    return a;
  }
  return std::nullopt;
}

std::optional<LayoutChange> layout_change(const Pipeline& p, const Stage& s) {
  if (!s.reduction || !computed(s) || s.is_recurrence() || s.loops.empty() || s.vars.empty())
    return std::nullopt;
  if (!s.loops.back().reduce || has_kind(s, LoopKind::vectorized) || s.reduce_lanes != 0 ||
      accumulator_of(p, s) >= 0 || is_cache_stage(s) || s.loop_rvars().size() != 1)
    return std::nullopt;
  // A GEMM-like stage computed whole gets a register tile (with its operand packed) instead;
  // one read only in part is fused into its reader first (the copy's place depends on where it
  // lands: copied inside it, the copy would follow it into the reader's row loop).
  if (gemm_like(s) && (!read_only_in_part(p, s) || s.compute.kind == ComputeKind::root))
    return std::nullopt;
  const std::string j = s.vars.back().name;
  if (s.find_loop(j) < 0 || !pure(s.loops[static_cast<size_t>(s.find_loop(j))]))
    return std::nullopt;
  if (const std::optional<AccessInfo> found = transposable_input(s)) {
    const AccessInfo& a = *found;
    auto pos = std::find(a.index_vars.begin(), a.index_vars.end() - 1, j);
    LayoutChange c;
    c.input = a.tensor;
    c.copy = fresh_stage(p, a.tensor + "_t");
    // The copy's dims as cache_read names them: the consumer's plain index, else d<position>.
    std::vector<std::string> names;
    for (size_t d = 0; d < a.index_vars.size(); ++d) {
      std::string n = a.index_vars[d].empty() ? "d" + std::to_string(d) : a.index_vars[d];
      if (std::find(names.begin(), names.end(), n) != names.end()) n = "d" + std::to_string(d);
      names.push_back(n);
    }
    const std::string jn = names[static_cast<size_t>(pos - a.index_vars.begin())];
    for (const auto& n : names)
      if (n != jn) c.order.push_back(n);
    c.order.push_back(jn);
    // Computed once per slice of the input: at the last of the host's outer loops that move the
    // slice (b, h), before the first that does not (o.i: every row reads the whole slice).
    const Stage& host = s.compute.kind == ComputeKind::at ? p.stages[p.find(s.compute.stage)] : s;
    for (const auto& l : host.loops) {
      if (!pure(l) || l.kind != LoopKind::serial || (&host == &s && l.name == j)) break;
      const std::set<std::string> vars = sched::loop_roots(host, l.name);
      const bool moves =
          std::any_of(vars.begin(), vars.end(), [&](const std::string& v) { return a.reads(v); });
      if (!moves) break;
      c.at = ref(host, l.name);
    }
    return c;
  }
  return std::nullopt;
}

// Whether row reduction s gets change_layout's form instead of rfactor's: the copy applies now,
// or s is a GEMM-like stage read only in part (attention's scores) still at root, with an input
// to copy, which gets it once fused. With no copy that applies (06's keys are gathered through
// the page table; 03's keys kn are an intermediate), its dot products get rfactor's vectors.
bool left_to_change_layout(const Pipeline& p, const Stage& s) {
  return layout_change(p, s) || (gemm_like(s) && read_only_in_part(p, s) &&
                                 s.compute.kind == ComputeKind::root && transposable_input(s));
}

// Whether e (part of stage c's definition) reads stage `name` inside a loop that does not index
// it and runs outside a loop that does: each iteration of that loop evaluates the read again, and
// the C++ compiler cannot hoist it out, as it hoists an invariant out of the loops inside.
// `order` holds, outermost first, the variables of each loop around e.
bool rereads(const Stage& c, const te::Expr& e, const std::string& name,
             std::vector<std::set<std::string>> order) {
  if (e.kind == te::ExprKind::reduce)
    for (int rv : e.rvars) {
      const std::string& v = c.reduce_vars[static_cast<size_t>(rv)].name;
      if (std::none_of(order.begin(), order.end(), [&](const auto& l) { return l.contains(v); }))
        order.push_back({v});  // a nested reduction: its loop is inside the stage's
    }
  if (e.kind == te::ExprKind::access && e.ref.kind == te::RefKind::stage && e.name == name) {
    std::set<std::string> uses;
    for (size_t d = 0; d < e.index_count(); ++d)
      te::visit(e.args[d], [&](const te::Expr& n) {
        if (n.kind == te::ExprKind::name) uses.insert(n.name);
      });
    auto indexes = [&](const std::set<std::string>& l) {
      return std::any_of(l.begin(), l.end(),
                         [&](const std::string& v) { return uses.contains(v); });
    };
    size_t last = 0;
    for (size_t k = 0; k < order.size(); ++k)
      if (indexes(order[k])) last = k;
    for (size_t k = 0; k < last; ++k)
      if (!indexes(order[k])) return true;
  }
  for (const auto& a : e.args)
    if (rereads(c, a, name, order)) return true;
  return false;
}

// Whether e (part of stage c's definition) reads stage `name` inside a reduction whose range
// moves with one of c's own variables (j in 0..i + 1: causal; i - W + 1..i + 1: a window), at an
// index that is that variable: then each value of it reads its own part (01's s[b, h, i, j] in
// the row max over j <= i). 03's att reads the value projection vv[b, j, h, c] over j <= i, but
// no index is i: every row reads a prefix of the same keys, and all rows together read all of
// vv (computed per row, it would be computed again for each).
bool read_in_moving_range(const Stage& c, const te::Expr& e, const std::string& name,
                          std::set<std::string> movers) {
  if (e.kind == te::ExprKind::reduce)
    for (int rv : e.rvars) {
      const te::IndexVar& r = c.reduce_vars[static_cast<size_t>(rv)];
      for (const te::Expr* bound : {&r.lo, &r.hi})
        te::visit(*bound, [&](const te::Expr& n) {
          if (n.kind == te::ExprKind::name)
            for (const auto& v : c.vars)
              if (n.name == v.name) movers.insert(v.name);
        });
    }
  if (!movers.empty() && e.kind == te::ExprKind::access && e.ref.kind == te::RefKind::stage &&
      e.name == name) {
    for (size_t d = 0; d < e.index_count(); ++d)
      if (e.args[d].kind == te::ExprKind::name && movers.count(e.args[d].name)) return true;
    return false;
  }
  for (const auto& a : e.args)
    if (read_in_moving_range(c, a, name, movers)) return true;
  return false;
}

// Inlining substitutes s's definition at every read. A reader that reads each element once
// (den[b, h, i] = sum(j: pe[b, h, i, j])), or re-reads it only along loops inside the ones that
// index it (y[n, d] reads ms[n] along d: the compiler keeps it in a register), pays nothing for
// it. One whose loop nest re-reads it outside (o[b, h, i, d] = sum(j: pe[b, h, i, j] * v[b, h, j,
// d]), with d outside j: once per d) evaluates it again on every iteration of that loop. Worth it
// only for a cheap definition: one with an exp, a division or a square root (cost >= 8) stays
// stored.
bool inlining_recomputes(const Pipeline& p, const Stage& s) {
  // A definition with a reduction in it (01's m[b, h, i] = max(j in 0..i + 1: s[b, h, i, j]),
  // whose moving range keeps it inside the expression) is not elementwise: inlined, each read
  // runs the whole loop again, and no compiler hoists a loop out of its reader's.
  bool reduces = false;
  te::visit(s.body, [&](const te::Expr& x) { reduces |= x.kind == te::ExprKind::reduce; });
  if (reduces) return true;
  if (sched::expr_cost(s.body) < 8) return false;
  for (int r : p.readers(p.find(s.name))) {
    const Stage& c = p.stages[static_cast<size_t>(r)];
    std::vector<std::set<std::string>> order;
    for (const auto& l : c.loops) order.push_back(sched::loop_roots(c, l.name));
    if (rereads(c, c.body, s.name, order)) return true;
  }
  return false;
}

bool read_only_in_part(const Pipeline& p, const Stage& s) {
  const int si = p.find(s.name);
  if (si < 0 || s.output >= 0) return false;
  const std::vector<int> readers = p.readers(si);
  if (readers.empty()) return false;
  for (int r : readers) {
    const Stage& c = p.stages[static_cast<size_t>(r)];
    if (read_in_moving_range(c, c.body, s.name, {})) continue;
    // Through an elementwise reader (01's s = s_r / sqrt(D), read by the row max over j <= i).
    if (!c.reduction && read_only_in_part(p, c)) continue;
    return false;
  }
  return true;
}

PipelineFacts pipeline_facts(const Pipeline& p) {
  PipelineFacts f;
  f.stages = static_cast<int>(p.stages.size());
  f.recomputed_transcendentals = static_cast<int>(recomputed_transcendentals(p).size());
  f.misaligned_rows = static_cast<int>(misaligned_rows(p).size());
  f.paged_gathers = static_cast<int>(gathered_stages(p).size());
  for (const PhaseSplit& c : phase_split_candidates(p)) {
    ++f.phase_splittable;
    f.phases = std::max(f.phases, c.phases);
  }
  for (int i : approximable_stages(p)) {
    ++f.approximable;
    f.tanh_softplus += sched::tanh_softplus_calls(p.stages[static_cast<size_t>(i)].body);
  }
  for (const HoistCandidate& h : hoist_candidates(p)) {
    ++f.hoistable;
    f.hoist_saved = std::max(f.hoist_saved, h.saved);
  }
  for (const Stage& s : p.stages) {
    if (s.is_recurrence()) ++f.recurrences;
    if (s.output < 0 && s.compute.kind == ComputeKind::root && !is_cache_stage(s)) {
      ++f.intermediates_at_root;
      if (read_only_in_part(p, s)) ++f.read_in_part;
      if (!s.reduction && !s.is_recurrence() && !inlining_recomputes(p, s))
        ++f.pure_intermediates_at_root;
    }
    if (gemm_like(s)) ++f.gemm_like;
    if (register_tileable(s)) ++f.tileable;
    if (register_tile(s)) ++f.register_blocked;
    if (s.origin == sched::StageOrigin::cache_read) ++f.packed;
    if (!double_buffer_carrier(p, s).empty()) ++f.packed_in_loop;
    if (s.double_buffer) ++f.double_buffered;
    if (row_reduction(s) && !left_to_change_layout(p, s) && !register_block_target(p, s))
      ++f.row_reductions;
    int cost = 0;
    if (inline_row_reduction(s, &cost)) {
      ++f.inline_row_reductions;
      if (cost >= 8) ++f.heavy_inline_reductions;
    }
    if (layout_change(p, s)) ++f.strided_operands;
    if (reciprocal_applies(p, s.name)) ++f.invertible_divisions;
    if (!computed(s)) continue;
    if (has_kind(s, LoopKind::vectorized))
      ++f.vectorized;
    else
      ++f.unvectorized;
    if (has_kind(s, LoopKind::parallel)) ++f.parallel;
  }
  return f;
}

}  // namespace kf::agents::builtin
