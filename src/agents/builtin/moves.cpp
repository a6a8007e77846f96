// Mechanical forms of the catalog's strategies. Each reads the pipeline's current schedule state
// and proposes groups of primitives; the schedule layer decides legality.
#include "agents/builtin/moves.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "agents/builtin/moves_internal.h"
#include "schedule/primitives.h"
#include "schedule/te_util.h"
#include "te/ast.h"

namespace kf::agents::builtin {

int64_t knob(const Knobs& k, const std::string& name, int64_t fallback) {
  auto it = k.find(name);
  return it == k.end() ? fallback : it->second;
}

sched::Primitive prim(const std::string& text) {
  auto p = sched::parse_primitive(text);
  KF_CHECK(p.has_value()) << "built-in move is malformed: " << text << ": " << p.error().message();
  return *p;
}

std::vector<MoveGroup> per_stage(const sched::Pipeline& p, const std::vector<int>& stages,
                                 const std::string& verb) {
  std::vector<MoveGroup> g;
  for (int i : stages) {
    const std::string& name = p.stages[static_cast<size_t>(i)].name;
    g.push_back({name, {prim(verb + " " + name)}});
  }
  return g;
}

using sched::ComputeKind;
using sched::LoopKind;
using sched::Pipeline;
using sched::Stage;

bool computed(const Stage& s) {
  return s.compute.kind != ComputeKind::inlined;
}

bool has_kind(const Stage& s, LoopKind k) {
  return std::any_of(s.loops.begin(), s.loops.end(),
                     [&](const sched::Loop& l) { return l.kind == k; });
}

bool pure(const sched::Loop& l) {
  return !l.reduce && !l.scan;
}

std::string ref(const Stage& s, const std::string& loop) {
  return s.name + "." + loop;
}

// A loop name not used in stage s: base, base2, base3...
std::string fresh_loop(const Stage& s, const std::string& base) {
  auto used = [&](const std::string& n) {
    if (s.find_loop(n) >= 0) return true;
    return std::any_of(s.splits.begin(), s.splits.end(), [&](const sched::Split& sp) {
      return sp.parent == n || sp.outer == n || sp.inner == n;
    });
  };
  if (!used(base)) return base;
  for (int i = 2;; ++i)
    if (!used(base + std::to_string(i))) return base + std::to_string(i);
}

std::string fresh_stage(const Pipeline& p, const std::string& base) {
  auto used = [&](const std::string& n) {
    if (p.find(n) >= 0) return true;
    for (const auto& t : p.task->inputs)
      if (t.name == n) return true;
    for (const auto& t : p.task->outputs)
      if (t.name == n) return true;
    for (const auto& d : p.task->dims)
      if (d == n) return true;
    return false;
  };
  if (!used(base)) return base;
  for (int i = 2;; ++i)
    if (!used(base + std::to_string(i))) return base + std::to_string(i);
}

// The pure loops of a stage, in nest order (names).
std::vector<std::string> pure_loops(const Stage& s) {
  std::vector<std::string> v;
  for (const auto& l : s.loops)
    if (pure(l)) v.push_back(l.name);
  return v;
}

namespace {

// Whether a (top-level) stage was produced by cache_write or cache_read, or is a zero-padded copy
// of phase_split (inlined, its reads would be guarded again: 28, 8.4 -> 460 ms).
bool is_cache_stage(const Stage& s) {
  return s.note.starts_with("cache_write of") || s.note.starts_with("cache_read of") ||
         s.note.starts_with("padded copy of");
}

// A pack whose storage puts another dim innermost than its inner loop (a weight panel stored
// transposed): lowering copies it in blocks transposed in registers (lower/transpose_copies);
// vectorizing its inner loop would turn each vector into a scatter instead.
bool transposing_pack(const Stage& s) {
  if (!s.note.starts_with("cache_read of") || s.storage_order.empty() || s.loops.empty())
    return false;
  return s.vars[static_cast<size_t>(s.storage_order.back())].name != s.loops.back().name;
}

// Index of the stage that accumulates s (cache_write of s), or -1.
int accumulator_of(const Pipeline& p, const Stage& s) {
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (p.stages[i].note == "cache_write of " + s.name) return static_cast<int>(i);
  return -1;
}

// Accesses to inputs in an expression, with each index's plain variable name ("" if complex).
struct AccessInfo {
  std::string tensor;
  te::RefKind kind = te::RefKind::input;
  std::vector<std::string> index_vars;  // each index's plain variable, "" if not a plain var
  std::set<std::string> uses;           // every variable any index reads
  // Variables every index reads only as `v / K`, K a constant of at least 16 (16's
  // hs[b, h, t / 64, n, p]): consecutive v read the same element K times running.
  std::set<std::string> blocked;
  bool reads(const std::string& v) const { return uses.count(v) > 0; }
};

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
  if (s.note.starts_with("cache_write of")) return true;
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

// A transposed copy that would let stage s vectorize along its last pure var j: s reduces over
// its innermost loop r, and an input is read with j in a dimension before its last and r last
// (01's scores: k[b, h, j, d] in sum(d: q[b, h, i, d] * k[b, h, j, d])). Vectors along j would
// gather that input lane by lane, which is why vectorize_inner leaves s alone and rfactor
// reduces along r with a horizontal sum per j. The copy stores it with j last.
struct LayoutChange {
  std::string input, copy;         // k, and its copy k_t
  std::vector<std::string> order;  // the copy's dims, j's last
  std::string at;                  // where the copy is computed ("" = at root)
};
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

// The moves that pack the operand a register tile `acc` (computed in `host`) streams along j into
// a contiguous panel once per column tile (host's loop jo): the first input read along j through
// plain variables, stored transposed when j is not its last dimension (W[o, i] of a linear layer),
// so the micro-kernel reads it unit-stride. With `transposed_only`, only such an operand.
std::vector<sched::Primitive> pack_moves(const Pipeline& p, const te::Expr& body,
                                         const std::string& host, const std::string& acc,
                                         const std::string& j, const std::string& jo, int64_t lanes,
                                         bool transposed_only) {
  for (const auto& a : accesses(body)) {
    if (a.kind != te::RefKind::input) continue;
    auto pos = std::find(a.index_vars.begin(), a.index_vars.end(), j);
    if (pos == a.index_vars.end()) continue;
    if (std::find(a.index_vars.begin(), a.index_vars.end(), "") != a.index_vars.end()) continue;
    const bool transposed = a.index_vars.back() != j;
    if (transposed_only && !transposed) continue;
    const std::string packed = fresh_stage(p, a.tensor + "_pk");
    std::vector<sched::Primitive> moves;
    moves.push_back(prim(fmt::format("cache_read {} {} {}", a.tensor, acc, packed)));
    if (transposed) {
      std::string order = "reorder_storage " + packed;
      for (const auto& v : a.index_vars)
        if (v != j) order += " " + v;
      order += " " + j;
      moves.push_back(prim(order));
    }
    moves.push_back(prim(fmt::format("compute_at {} {}.{}", packed, host, jo)));
    if (!transposed) moves.push_back(prim(fmt::format("vectorize {}.{} {}", packed, j, lanes)));
    return moves;
  }
  return {};
}

// The tile stage's part of a register tile (below): the tile stage (an accumulator of reduction
// r, or r itself) is computed at the host's row tile with r's reduction loops outside its rows ti
// and columns tj. Alone, it adds a second reduction to a host tiled already.
void append_tile_stage_moves(std::vector<sched::Primitive>& out, const Stage& host,
                             const std::string& hi, const std::string& tile, const Stage& r,
                             const std::string& ti, const std::string& tj, int64_t lanes) {
  out.push_back(prim(fmt::format("compute_at {} {}.{}.o", tile, host.name, hi)));
  std::string tile_order = "reorder " + tile;
  for (const auto& v : r.vars)
    if (v.name != ti && v.name != tj) tile_order += " " + v.name;
  for (int rv : r.loop_rvars()) tile_order += " " + r.reduce_vars[rv].name;
  out.push_back(prim(tile_order + " " + ti + " " + tj));
  out.push_back(prim(fmt::format("unroll {}.{}", tile, ti)));
  out.push_back(prim(fmt::format("vectorize {}.{} {}", tile, tj, lanes)));
}

// The moves of an MR x NR register tile: the host stage (whose loops carry the tile) splits its
// row var hi and column var hj and orders row tiles inside column tiles, rows unrolled, columns
// vectors; then the tile stage's part (above).
void append_tile_moves(std::vector<sched::Primitive>& out, const Stage& host, const std::string& hi,
                       const std::string& hj, const std::string& tile, const Stage& r,
                       const std::string& ti, const std::string& tj, int64_t mr, int64_t nr,
                       int64_t lanes) {
  const std::string io = hi + ".o", ii = hi + ".i", jo = hj + ".o", ji = hj + ".i";
  out.push_back(prim(fmt::format("split {}.{} {} {} {}", host.name, hi, io, ii, mr)));
  out.push_back(prim(fmt::format("split {}.{} {} {} {}", host.name, hj, jo, ji, nr)));
  std::string order = "reorder " + host.name;
  for (const auto& v : host.vars)
    if (v.name != hi && v.name != hj) order += " " + v.name;
  out.push_back(prim(order + fmt::format(" {} {} {} {}", jo, io, ii, ji)));
  out.push_back(prim(fmt::format("unroll {}.{}", host.name, ii)));
  out.push_back(prim(fmt::format("vectorize {}.{} {}", host.name, ji, lanes)));
  append_tile_stage_moves(out, host, hi, tile, r, ti, tj, lanes);
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

}  // namespace

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

Expected<std::vector<MoveGroup>> moves_change_layout(const Pipeline& p, const Knobs& k,
                                                     const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    const std::optional<LayoutChange> c = layout_change(p, s);
    if (!c) continue;
    const std::string j = s.vars.back().name;
    MoveGroup mg{s.name, {prim(fmt::format("cache_read {} {} {}", c->input, s.name, c->copy))}};
    std::string order = "reorder_storage " + c->copy;
    for (const auto& d : c->order) order += " " + d;
    mg.moves.push_back(prim(order));
    if (!c->at.empty()) mg.moves.push_back(prim(fmt::format("compute_at {} {}", c->copy, c->at)));
    // The reduction outside j, the vectors along j.
    std::string nest = "reorder " + s.name;
    for (const auto& l : s.loops)
      if (l.name != j) nest += " " + l.name;
    mg.moves.push_back(prim(nest + " " + j));
    mg.moves.push_back(prim(fmt::format("vectorize {} {}", ref(s, j), lanes)));
    g.push_back(std::move(mg));
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_inline_elementwise(const Pipeline& p, const Knobs&,
                                                          const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (s.output >= 0 || s.reduction || s.is_recurrence() || s.compute.kind != ComputeKind::root)
      continue;
    if (is_cache_stage(s) || inlining_recomputes(p, s)) continue;
    g.push_back({s.name, {prim("compute_inline " + s.name)}});
  }
  return g;
}

// Whether every read of stage `name` in e indexes it by each variable in `vars` (a plain index,
// in some dimension): then iterations of loops over those variables read disjoint parts of it.
bool indexed_by_all(const te::Expr& e, const std::string& name, const std::set<std::string>& vars) {
  bool all = true;
  te::visit(e, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.ref.kind != te::RefKind::stage || x.name != name)
      return;
    for (const auto& v : vars) {
      bool found = false;
      for (size_t d = 0; d < x.index_count(); ++d)
        found |= x.args[d].kind == te::ExprKind::name && x.args[d].name == v;
      all &= found;
    }
  });
  return all;
}

namespace {

// Whether some access to s in e indexes one of s's dims `dims` with an expression that reads
// one of `vars`; also when e does not read s itself (its readers are computed inside the stage
// e belongs to, with variables of their own: nothing is known).
bool may_walk_dims(const te::Expr& e, const Stage& s, const std::set<std::string>& dims,
                   const std::set<std::string>& vars) {
  bool walks = false, found = false;
  te::visit(e, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.ref.kind != te::RefKind::stage || x.name != s.name)
      return;
    found = true;
    for (size_t k = 0; k < x.index_count() && k < s.vars.size(); ++k) {
      if (!dims.count(s.vars[k].name)) continue;
      te::visit(x.args[k], [&](const te::Expr& n) {
        walks = walks || (n.kind == te::ExprKind::name && vars.count(n.name));
      });
    }
  });
  return walks || !found;
}

// For each stage computed inside `host` (through compute_at chains), its pure vars that the
// host's variables `vars` fix, each with the host var that fixes it: the host reads the stage (or
// a stage that reads it) at a plain index of a fixed var. 03's y computes att at y.s.o and reads
// att[b, s, h, c]: att's i is fixed by y's s, b by b. A var read at different values in two
// places is not fixed.
std::map<std::string, std::map<std::string, std::string>> fixed_vars(
    const Pipeline& p, const Stage& host, const std::set<std::string>& vars) {
  std::map<std::string, std::map<std::string, std::string>> fixed;  // the host, stages read so far
  auto& own = fixed[host.name];
  for (const auto& v : vars) own[v] = v;
  const int hi = p.find(host.name);
  // Readers come after what they read: from the host down the program order, reversed.
  for (int xi = static_cast<int>(p.stages.size()) - 1; xi >= 0; --xi) {
    const Stage& x = p.stages[static_cast<size_t>(xi)];
    if (xi != hi && sched::root_host(p, xi) != hi) continue;
    if (!fixed.count(x.name)) continue;  // not read by anything inside the host
    const std::map<std::string, std::string> fx = fixed.at(x.name);
    te::visit(x.body, [&](const te::Expr& e) {
      if (e.kind != te::ExprKind::access || e.ref.kind != te::RefKind::stage) return;
      const int yi = p.find(e.name);
      if (yi < 0 || yi == hi || sched::root_host(p, yi) != hi) return;
      const Stage& y = p.stages[static_cast<size_t>(yi)];
      std::map<std::string, std::string> fy;
      for (size_t d = 0; d < e.index_count() && d < y.vars.size(); ++d) {
        const te::Expr& a = e.args[d];
        if (a.kind != te::ExprKind::name || a.ref.kind != te::RefKind::index_var) continue;
        auto it = fx.find(a.name);
        if (it != fx.end()) fy[y.vars[d].name] = it->second;
      }
      auto [it, first] = fixed.try_emplace(y.name, fy);
      if (first) return;
      std::map<std::string, std::string> both;  // fixed by every read
      for (const auto& [v, o] : it->second)
        if (fy.count(v) && fy.at(v) == o) both[v] = o;
      it->second = std::move(both);
    });
  }
  return fixed;
}

// Whether each iteration of the host's loops over `vars` reads its own part of s (s computed
// there is never computed twice): every consumer of s reads it at plain indices of the vars the
// host fixes in it, and each host var fixes one. Without it, 03's value projection vv, read by
// att over all keys j <= i, went into the rows of y's register tile with att and was computed
// again for every block of six rows (the candidate timed out).
bool reads_own_part(const Pipeline& p, const Stage& host, const Stage& s,
                    const std::set<std::string>& vars) {
  const auto fixed = fixed_vars(p, host, vars);
  for (int ci : p.consumers(p.find(s.name))) {
    const Stage& c = p.stages[static_cast<size_t>(ci)];
    auto it = fixed.find(c.name);
    if (it == fixed.end()) return false;
    std::set<std::string> cvars, origins;
    for (const auto& [v, o] : it->second) {
      cvars.insert(v);
      origins.insert(o);
    }
    if (origins.size() != vars.size() || !indexed_by_all(c.body, s.name, cvars)) return false;
  }
  return true;
}

}  // namespace

Expected<std::vector<MoveGroup>> moves_fuse_into_consumer(const Pipeline& p, const Knobs&,
                                                          const MoveContext&) {
  std::vector<MoveGroup> g;
  // Later stages first, so a chain ms_r → ms → y lands in y's row loop link by link.
  Pipeline work = p;
  for (int si = static_cast<int>(work.stages.size()) - 1; si >= 0; --si) {
    const Stage& s = work.stages[si];
    if (s.output >= 0 || s.compute.kind != ComputeKind::root || is_cache_stage(s)) continue;
    if (s.is_recurrence()) continue;
    const std::vector<int> cons = work.consumers(si);
    if (cons.empty()) continue;
    // The stage every consumer lives in: the consumer itself at root, or the stage at root its
    // compute_at chain ends in (y_r_rf at y_r.b, y_r at y.b: y), with the loop of that stage
    // the chain enters it at ("" for a consumer at root).
    std::vector<std::string> entry(cons.size());
    int hi = -1;
    bool same = true;
    for (size_t k = 0; k < cons.size(); ++k) {
      const int h = sched::root_host(work, cons[k], &entry[k]);
      if (k > 0 && h != hi) same = false;
      hi = h;
    }
    if (!same || hi < 0) continue;
    const Stage& hs = work.stages[hi];
    std::vector<std::string> loops = pure_loops(hs);
    if (loops.empty()) continue;
    // The deepest of the host's loops whose iterations each read their own part of s (it and
    // every loop outside it index s in all the host's reads): s is computed there for just that
    // part (a row of 01's scores, j in 0..i + 1, at o.i: the causal half), never twice. A loop
    // inside it that does not index s (o.d) would compute the same part again per iteration. The
    // host's innermost loop stays inside: it is the one its vectors run along.
    // A stage tiled already (a register tile, or the host of one: its pure loops split) keeps
    // its whole tiles: computed per row of its reader, a tile of MR rows would shrink to one and
    // its packed panel would be filled again per row (50's GEMM + GELU tile fused into the
    // softmax's row loop: 85 ms against 21 ms). It may go to the host's outermost loop only if
    // that loop does not walk a tiled dim (01's batch loop, outside tiles of rows i); its
    // readers can still move into the reader's rows. A split reduction (rfactor's) does not
    // count.
    std::set<std::string> tiled_dims;
    for (const auto& sp : s.splits)
      for (const auto& v : s.vars)
        if (sp.parent == v.name) tiled_dims.insert(v.name);
    const bool tiled = accumulator_of(work, s) >= 0 || !tiled_dims.empty();
    size_t depth = 0;
    std::set<std::string> vars = sched::loop_roots(hs, loops[0]);
    if (tiled && may_walk_dims(hs.body, s, tiled_dims, vars)) continue;
    // Not even the outermost loop's iterations read their own parts (31's column mean mu[o], read
    // by v[b, o] in y's rows b): computed there, s would be computed again per iteration.
    if (!tiled && !reads_own_part(work, hs, s, vars)) continue;
    if (!tiled)
      while (depth + 2 < loops.size() &&
             hs.loops[static_cast<size_t>(hs.find_loop(loops[depth + 1]))].kind ==
                 LoopKind::serial) {
        std::set<std::string> next = vars;
        next.merge(sched::loop_roots(hs, loops[depth + 1]));
        if (!reads_own_part(work, hs, s, next)) break;
        vars = std::move(next);
        ++depth;
      }
    std::string loop = loops[depth];
    // A consumer computed inside host at loop L: fuse at that same loop (or outside it).
    for (const std::string& at : entry) {
      if (at.empty()) continue;
      const int a = hs.find_loop(at), b = hs.find_loop(loop);
      if (a >= 0 && b > a) loop = at;
    }
    MoveGroup mg{s.name, {prim("compute_at " + s.name + " " + ref(hs, loop))}};
    // Only a stage read in part (causal scores) computes less once fused, and only below the
    // host's outermost loop; otherwise the work is the same as at root, in another place (16's
    // chunk states at y.b, its y_r2 read whole at y.h; 03's attention at y.b).
    mg.locality_only = loop == loops[0] || !read_only_in_part(work, s);
    if (sched::apply_primitive(work, mg.moves[0]).ok()) g.push_back(std::move(mg));
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_vectorize_inner(const Pipeline& p, const Knobs& k,
                                                       const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!computed(s) || s.loops.empty() || has_kind(s, LoopKind::vectorized)) continue;
    if (transposing_pack(s)) continue;
    // Lanes along a row var would each run their own reduction, gathering its reads across
    // rows; rfactor_reduction runs the reduction itself as vectors instead.
    if (inline_row_reduction(s)) continue;
    const sched::Loop& inner = s.loops.back();
    if (!pure(inner) || inner.kind != LoopKind::serial) continue;
    g.push_back({s.name, {prim(fmt::format("vectorize {} {}", ref(s, inner.name), lanes))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_reorder_unit_stride(const Pipeline& p, const Knobs&,
                                                           const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!s.reduction || !computed(s) || s.is_recurrence() || s.loops.empty()) continue;
    if (!s.loops.back().reduce || s.vars.empty()) continue;
    // The loop of the stage's last pure var, if it is a loop of its own (not split or fused).
    const std::string j = s.vars.back().name;
    if (s.find_loop(j) < 0) continue;
    bool strided = false;  // some operand's last index is j: make j the unit-stride inner loop
    for (const auto& a : accesses(s.body))
      if (!a.index_vars.empty() && a.index_vars.back() == j) strided = true;
    if (!strided) continue;
    std::string order = "reorder " + s.name;
    for (const auto& l : s.loops)
      if (l.name != j) order += " " + l.name;
    order += " " + j;
    g.push_back({s.name, {prim(order)}});
  }
  return g;
}

bool register_block_target(const Pipeline& p, const Stage& s);

Expected<std::vector<MoveGroup>> moves_rfactor_reduction(const Pipeline& p, const Knobs& k,
                                                         const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!row_reduction(s) || has_kind(s, LoopKind::vectorized)) continue;
    // Long rows along j with an operand copied transposed vectorize better along j
    // (change_layout) than as a horizontal sum per element; attention's scores get that form
    // once fused into their reader's rows.
    if (left_to_change_layout(p, s)) continue;
    // A GEMM's dot products are register_block's: each loaded vector then feeds several FMAs.
    // As vector partial sums every load feeds one (and a transposed operand is gathered).
    if (register_block_target(p, s)) continue;
    const std::string r = s.loops.back().name;
    const std::string ro = fresh_loop(s, r + ".vo"), ri = fresh_loop(s, r + ".vi");
    const std::string rf = fresh_stage(p, s.name + "_rf");
    MoveGroup mg{s.name, {}};
    mg.moves.push_back(prim(fmt::format("split {} {} {} {}", ref(s, r), ro, ri, lanes)));
    mg.moves.push_back(prim(fmt::format("rfactor {} {}", ref(s, ri), rf)));
    // The partials' loops: pure loops, then the reduction's: put the lanes innermost.
    std::string order = "reorder " + rf;
    for (const auto& l : s.loops)
      if (l.name != r) order += " " + l.name;
    order += " " + ro + " " + ri;
    mg.moves.push_back(prim(order));
    mg.moves.push_back(prim(fmt::format("vectorize {}.{} {}", rf, ri, lanes)));
    std::vector<std::string> pl = pure_loops(s);
    if (!pl.empty())
      mg.moves.push_back(prim(fmt::format("compute_at {} {}", rf, ref(s, pl.back()))));
    g.push_back(std::move(mg));
  }
  // Reductions inside a definition have no loop to split: the lowering runs them as vectors.
  for (const Stage& s : p.stages)
    if (inline_row_reduction(s))
      g.push_back({s.name, {prim(fmt::format("vectorize_reductions {} {}", s.name, lanes))}});
  return g;
}

Expected<std::vector<MoveGroup>> moves_parallel_outer(const Pipeline& p, const Knobs&,
                                                      const MoveContext& ctx) {
  std::vector<MoveGroup> g;
  if (ctx.threads <= 1) return g;
  for (const Stage& s : p.stages) {
    if (s.compute.kind != ComputeKind::root || s.loops.empty()) continue;
    if (has_kind(s, LoopKind::parallel)) continue;
    const sched::Loop& outer = s.loops.front();
    if (!pure(outer) || outer.kind != LoopKind::serial) continue;
    g.push_back({s.name, {prim("parallel " + ref(s, outer.name))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_fuse_parallel_loops(const Pipeline& p, const Knobs&,
                                                           const MoveContext& ctx) {
  std::vector<MoveGroup> g;
  if (ctx.threads <= 1) return g;
  for (const Stage& s : p.stages) {
    if (s.compute.kind != ComputeKind::root || s.loops.size() < 3) continue;
    if (has_kind(s, LoopKind::parallel)) continue;
    const sched::Loop &a = s.loops[0], &b = s.loops[1];
    if (!pure(a) || !pure(b) || a.kind != LoopKind::serial || b.kind != LoopKind::serial) continue;
    const std::string f = fresh_loop(s, a.name + "_" + b.name);
    g.push_back({s.name,
                 {prim(fmt::format("fuse {} {} {} {}", s.name, a.name, b.name, f)),
                  prim("parallel " + ref(s, f))}});
  }
  return g;
}

// Whether register_block tiles s: GEMM-like with vectors along its column var, at root, read
// whole (fuse_into_consumer computes just the part read), not yet tiled, with its default loops
// (the strategy owns the stage's nest), and an output only in its own layout.
bool register_block_target(const Pipeline& p, const Stage& s) {
  if (!register_tileable(s) || s.compute.kind != ComputeKind::root) return false;
  if (read_only_in_part(p, s) || accumulator_of(p, s) >= 0) return false;
  if (s.loops.size() != s.vars.size() + s.loop_rvars().size() || !s.splits.empty()) return false;
  return tile_col_var(s) == s.vars.back().name || s.output < 0;
}

Expected<std::vector<MoveGroup>> moves_register_block(const Pipeline& p, const Knobs& k,
                                                      const MoveContext&) {
  const int64_t mr = knob(k, "mr", 6), nr = knob(k, "nr", 32), lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!register_block_target(p, s)) continue;
    const std::string j = tile_col_var(s), i = tile_row_var(s, j);
    const std::string acc = fresh_stage(p, s.name + "_acc");
    MoveGroup mg{s.name, {prim(fmt::format("cache_write {} {}", s.name, acc))}};
    if (j != s.vars.back().name) {
      std::string layout = "reorder_storage " + s.name;
      for (const auto& v : s.vars)
        if (v.name != j) layout += " " + v.name;
      mg.moves.push_back(prim(layout + " " + j));
    }
    append_tile_moves(mg.moves, s, i, j, acc, s, i, j, mr, nr, lanes);
    // An operand read transposed along j (W[o, i]) would be gathered lane by lane: the tile is
    // only worth having with that operand packed, so the packing is part of the same step.
    for (auto& m : pack_moves(p, s.body, s.name, acc, j, j + ".o", lanes, true))
      mg.moves.push_back(m);
    g.push_back(std::move(mg));
  }
  return g;
}

namespace {

// How consumer c reads producer stage `prod`: every access through plain variables of c, the
// same ones each time, one per dimension (z[n, k, p, q] in y[n, k, p, q] = max(z[n, k, p, q], 0)).
// Returns, for each dim of the producer, the consumer var that indexes it; empty if c reads it
// any other way (shifted, transposed into fewer dims, reduced over).
std::vector<std::string> pointwise_map(const Stage& c, const Stage& prod) {
  std::optional<std::vector<std::string>> map;
  bool ok = true;
  te::visit(c.body, [&](const te::Expr& x) {
    if (x.kind != te::ExprKind::access || x.ref.kind != te::RefKind::stage || x.name != prod.name)
      return;
    std::vector<std::string> m;
    for (size_t d = 0; d < x.index_count(); ++d)
      m.push_back(x.args[d].kind == te::ExprKind::name &&
                          x.args[d].ref.kind == te::RefKind::index_var
                      ? x.args[d].name
                      : "");
    if (map && *map != m) ok = false;
    map = m;
  });
  if (!ok || !map || map->size() != prod.vars.size() || c.reduction || c.is_recurrence()) return {};
  std::set<std::string> seen;
  for (const auto& v : *map)
    if (v.empty() || !seen.insert(v).second) return {};
  if (c.vars.size() != map->size()) return {};
  return *map;
}

// The elementwise chain from a reduction stage to the stage it ends in: r -> e1 -> ... -> end,
// each link read pointwise and by nothing else. The chain ends at an output, or at the last
// intermediate before a reader that is not such a link (the GELU before a softmax's row max and
// sum, which need whole rows): that stage is written once, from the tile. Fills the stages to
// inline and, for each dim of r, the end's var for it; false when r's own result goes anywhere
// else (register_block's case).
bool epilogue_chain(const Pipeline& p, int r, std::vector<std::string>& inline_stages, int& out,
                    std::vector<std::string>& dims) {
  dims.clear();
  for (const auto& v : p.stages[r].vars) dims.push_back(v.name);
  int cur = r;
  auto end_here = [&] {
    // Only a link that would have been inlined (computed at root) can end the chain.
    if (inline_stages.empty() || inline_stages.back() != p.stages[cur].name) return false;
    inline_stages.pop_back();
    out = cur;
    return true;
  };
  for (int guard = 0; guard < 16; ++guard) {
    const std::vector<int> rd = p.readers(cur);
    if (rd.size() != 1) return end_here();
    const Stage& c = p.stages[rd[0]];
    std::vector<std::string> m = pointwise_map(c, p.stages[cur]);
    if (m.empty() || is_cache_stage(c)) return end_here();
    if (c.output < 0 && (c.compute.kind == ComputeKind::at || !c.splits.empty())) return end_here();
    // dims[d] is cur's var for r's dim d; m[e] is c's var for cur's dim e.
    for (auto& d : dims) {
      const auto& cv = p.stages[cur].vars;
      auto it =
          std::find_if(cv.begin(), cv.end(), [&](const te::IndexVar& v) { return v.name == d; });
      if (it == cv.end()) return false;
      d = m[static_cast<size_t>(it - cv.begin())];
    }
    if (c.output >= 0) {
      out = rd[0];
      return c.compute.kind == ComputeKind::root;
    }
    if (c.compute.kind == ComputeKind::root) inline_stages.push_back(c.name);
    cur = rd[0];
  }
  return false;
}

}  // namespace

Expected<std::vector<MoveGroup>> moves_register_block_epilogue(const Pipeline& p, const Knobs& k,
                                                               const MoveContext& ctx) {
  const int64_t mr = knob(k, "mr", 6), nr = knob(k, "nr", 32), lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  struct TileEnd {
    int stage;
    std::string row, col;
    size_t group;
  };
  std::vector<TileEnd> ends;
  std::vector<std::string> inlined;
  std::set<std::string> fused;
  for (size_t ri = 0; ri < p.stages.size(); ++ri) {
    const Stage& s = p.stages[ri];
    if (!register_tileable(s) || s.compute.kind != ComputeKind::root || s.output >= 0) continue;
    if (read_only_in_part(p, s)) continue;
    if (accumulator_of(p, s) >= 0 || !s.splits.empty()) continue;
    if (s.loops.size() != s.vars.size() + s.loop_rvars().size()) continue;
    std::vector<std::string> inl, dims;
    int oi = -1;
    if (!epilogue_chain(p, static_cast<int>(ri), inl, oi, dims)) continue;
    const Stage& o = p.stages[oi];
    if (!o.splits.empty() || o.loops.size() != o.vars.size()) continue;
    const std::string j = s.vars.back().name, i = tile_row_var(s, j);
    size_t id = 0;
    while (s.vars[id].name != i) ++id;
    const std::string oi_v = dims[id], oj_v = dims.back();
    if (o.vars.back().name != oj_v) continue;  // the tile's vectors must be the output's rows
    // A second reduction whose chain ends in the same tile (09's gate and up projections, both
    // read by h) is computed into it too: one group, both accumulators in registers.
    auto same = std::find_if(ends.begin(), ends.end(), [&](const TileEnd& e) {
      return e.stage == oi && e.row == oi_v && e.col == oj_v;
    });
    const bool joins = same != ends.end();
    MoveGroup fresh{s.name, {}};
    MoveGroup& mg = joins ? g[same->group] : fresh;
    for (const auto& e : inl)
      if (std::find(inlined.begin(), inlined.end(), e) == inlined.end()) {
        mg.moves.push_back(prim("compute_inline " + e));
        inlined.push_back(e);
      }
    // The reduction itself is the tile, computed at the end stage's row tile.
    if (joins)
      append_tile_stage_moves(mg.moves, o, oi_v, s.name, s, i, j, lanes);
    else
      append_tile_moves(mg.moves, o, oi_v, oj_v, s.name, s, i, j, mr, nr, lanes);
    for (auto& m : pack_moves(p, s.body, o.name, s.name, j, oj_v + ".o", lanes, false))
      mg.moves.push_back(m);
    if (!joins) {
      ends.push_back({oi, oi_v, oj_v, g.size()});
      g.push_back(std::move(fresh));
    }
    fused.insert(s.name);
  }
  // The other GEMM-like reductions (09's down projection) get the plain tile in the same step:
  // left naive, they would dominate every measurement of this one (and the tuning of its knobs).
  if (g.empty()) return g;
  auto plain = moves_register_block(p, k, ctx);
  if (!plain) return plain.error();
  for (MoveGroup& mg : *plain)
    if (!fused.contains(mg.target)) g.push_back(std::move(mg));
  return g;
}

Expected<std::vector<MoveGroup>> moves_pack_operand(const Pipeline& p, const Knobs& k,
                                                    const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    const int ai = accumulator_of(p, s);
    if (ai < 0) continue;
    const Stage& acc = p.stages[ai];
    if (acc.compute.kind != ComputeKind::at || acc.vars.size() < 2) continue;
    // The tile's vector var: its vectorized loop (register_block's column var).
    std::string j = acc.vars.back().name;
    for (const auto& l : acc.loops)
      if (l.kind == LoopKind::vectorized &&
          std::any_of(acc.vars.begin(), acc.vars.end(),
                      [&](const te::IndexVar& v) { return v.name == l.name; }))
        j = l.name;
    // The j.o loop of the stage the tile lives in: the panel is packed once per column tile.
    std::string jo;
    for (const auto& sp : s.splits)
      if (sp.kind == sched::SplitKind::split && sp.parent == j) jo = sp.outer;
    if (jo.empty()) continue;
    std::vector<sched::Primitive> moves =
        pack_moves(p, acc.body, s.name, acc.name, j, jo, lanes, false);
    if (!moves.empty()) g.push_back({s.name, std::move(moves)});
  }
  return g;
}

// For a pack (cache_read stage) filled at a serial or parallel loop (one chunk of it per
// thread), the loop of its reader that can carry
// the next panel's rows (its outermost serial reduction loop: the micro-kernel's k); "" when the
// pack is not such a stage or is double buffered already.
static std::string double_buffer_carrier(const Pipeline& p, const Stage& s) {
  if (!s.note.starts_with("cache_read of") || s.reduction || s.double_buffer ||
      s.compute.kind != ComputeKind::at || s.loops.empty())
    return "";
  const int host = p.find(s.compute.stage);
  if (host < 0) return "";
  const int l = p.stages[host].find_loop(s.compute.loop);
  const LoopKind lk = l < 0 ? LoopKind::vectorized : p.stages[host].loops[l].kind;
  if (lk != LoopKind::serial && lk != LoopKind::parallel) return "";
  const int si = p.find(s.name);
  for (int r : p.readers(si)) {
    const Stage& c = p.stages[r];
    for (const sched::Loop& loop : c.loops)
      if (loop.reduce && (loop.kind == LoopKind::serial || loop.kind == LoopKind::unrolled))
        return ref(c, loop.name);
  }
  return "";
}

Expected<std::vector<MoveGroup>> moves_double_buffer(const Pipeline& p, const Knobs& k,
                                                     const MoveContext&) {
  const int64_t every = knob(k, "every", 32);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    const std::string carrier = double_buffer_carrier(p, s);
    if (carrier.empty()) continue;
    g.push_back({s.name, {prim(fmt::format("double_buffer {} {} {}", s.name, carrier, every))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_unroll_reduction(const Pipeline& p, const Knobs& k,
                                                        const MoveContext&) {
  const int64_t u = knob(k, "unroll", 4);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!s.reduction || !computed(s) || s.is_recurrence() || s.where_split) continue;
    // The outermost reduce loop of a register tile (k of C_acc), once.
    if (!register_tile(s)) continue;
    if (std::any_of(s.loops.begin(), s.loops.end(),
                    [](const sched::Loop& l) { return l.reduce && l.kind == LoopKind::unrolled; }))
      continue;
    std::string r;
    for (const auto& l : s.loops)
      if (l.reduce) {
        r = l.name;
        break;
      }
    if (r.empty()) continue;
    const std::string ro = fresh_loop(s, r + ".uo"), ri = fresh_loop(s, r + ".ui");
    g.push_back({s.name,
                 {prim(fmt::format("split {} {} {} {}", ref(s, r), ro, ri, u)),
                  prim(fmt::format("unroll {}", ref(s, ri)))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_accumulate_locally(const Pipeline& p, const Knobs&,
                                                          const MoveContext&) {
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!s.reduction || s.compute.kind != ComputeKind::root || s.is_recurrence()) continue;
    if (accumulator_of(p, s) >= 0 || s.vars.size() < 2 || gemm_like(s) == false) continue;
    std::vector<std::string> pl = pure_loops(s);
    if (pl.size() < 2) continue;
    const std::string acc = fresh_stage(p, s.name + "_row");
    g.push_back({s.name,
                 {prim(fmt::format("cache_write {} {}", s.name, acc)),
                  prim(fmt::format("compute_at {} {}", acc, ref(s, pl.front())))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_tile_2d(const Pipeline& p, const Knobs& k,
                                               const MoveContext&) {
  const int64_t ti = knob(k, "ti", 32), tj = knob(k, "tj", 64);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (s.compute.kind != ComputeKind::root || s.reduction || s.loops.size() < 2) continue;
    if (!s.splits.empty() || has_kind(s, LoopKind::vectorized)) continue;
    const sched::Loop &a = s.loops[s.loops.size() - 2], &b = s.loops.back();
    if (!pure(a) || !pure(b)) continue;
    g.push_back(
        {s.name, {prim(fmt::format("tile {} {} {} {} {}", s.name, a.name, b.name, ti, tj))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_unroll_inner(const Pipeline& p, const Knobs& k,
                                                    const MoveContext&) {
  const int64_t u = knob(k, "unroll", 4);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!computed(s) || s.loops.size() < 2 || is_cache_stage(s)) continue;
    if (has_kind(s, LoopKind::unrolled)) continue;
    // The loop just outside a vectorized innermost loop, when it is serial and pure.
    if (s.loops.back().kind != LoopKind::vectorized) continue;
    const sched::Loop& l = s.loops[s.loops.size() - 2];
    if (!pure(l) || l.kind != LoopKind::serial) continue;
    const std::string lo = fresh_loop(s, l.name + ".uo"), li = fresh_loop(s, l.name + ".ui");
    g.push_back({s.name,
                 {prim(fmt::format("split {} {} {} {}", ref(s, l.name), lo, li, u)),
                  prim(fmt::format("unroll {}", ref(s, li)))}});
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_streaming_stores(const Pipeline& p, const Knobs& k,
                                                        const MoveContext&) {
  const int64_t lanes = knob(k, "lanes", 16);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (s.output < 0 || s.nontemporal || s.loops.empty()) continue;
    if (p.task->outputs[static_cast<size_t>(s.output)].dtype != DType::f32) continue;
    MoveGroup mg{s.name, {}};
    // Streaming stores are whole vectors: an output whose loops the compiler vectorizes on its
    // own gets its innermost loop vectorized explicitly in the same step.
    if (!has_kind(s, LoopKind::vectorized)) {
      const sched::Loop& inner = s.loops.back();
      if (!pure(inner) || inner.kind != LoopKind::serial) continue;
      mg.moves.push_back(prim(fmt::format("vectorize {} {}", ref(s, inner.name), lanes)));
    }
    mg.moves.push_back(prim("nontemporal " + s.name));
    g.push_back(std::move(mg));
  }
  return g;
}

Expected<std::vector<MoveGroup>> moves_prefetch(const Pipeline& p, const Knobs& k,
                                                const MoveContext&) {
  const int64_t distance = knob(k, "distance", 4096);
  std::vector<MoveGroup> g;
  for (const Stage& s : p.stages) {
    if (!computed(s) || s.loops.empty()) continue;
    // A vectorized innermost loop over a plain variable that walks an input's rows.
    const sched::Loop& inner = s.loops.back();
    if (inner.kind != LoopKind::vectorized || inner.prefetch > 0 || !pure(inner)) continue;
    bool streams = false;
    for (const auto& a : accesses(s.body))
      if (a.kind == te::RefKind::input && !a.index_vars.empty() &&
          a.index_vars.back() == inner.name)
        streams = true;
    if (!streams) continue;
    g.push_back({s.name, {prim(fmt::format("prefetch {} {}", ref(s, inner.name), distance))}});
  }
  return g;
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
    if (s.note.starts_with("cache_read of")) ++f.packed;
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
