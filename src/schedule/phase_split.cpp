// The `phase_split S NEW` primitive: the phase (sub-pixel) decomposition of a strided transposed
// convolution. A reduction whose taps only count where `(o + P - r) % s == 0` (o an output var,
// r a reduction var, P >= 0 and s >= 2 constants) and whose input is read at `(o + P - r) / s`
// spends s - 1 of every s iterations of r on a zero, and divides, takes a modulo and tests
// bounds on every tap. Writing o = s*q + p (p the phase) and r = s*t + ((p + P) % s) leaves only
// the taps that count, each reading the input at q - t + (p + P) / s: plain convolutions, one per
// phase combination, with unit-stride reads along q.
//
//   z_r[n, k, od, oh, ow] = sum(c, a, b, e: select((od + 1 - a) % 2 == 0 && ..., x[n, c,
//       (od + 1 - a) / 2, ...] else 0, 0) * weight[c, k, a, b, e])
//   phase_split z_r zp  ->
//   zp_in[n, c, od_x, oh_x, ow_x] = x[n, c, od_x - S, ...] else 0     (a zero-padded copy)
//   zp_w[c, k, a_w, b_w, e_w]      = weight[c, k, a_w, b_w, e_w] else 0  (taps padded to s*T)
//   zp[od_p, oh_p, ow_p, n, k, od_q, oh_q, ow_q] = sum(c, a_t, b_t, e_t:
//       zp_in[n, c, od_q - a_t + (od_p + 1) / 2 + S, ...] * zp_w[c, k, 2 * a_t + (od_p + 1) % 2,
//       ...])
//   z_r[n, k, od, oh, ow] = zp[od % 2, oh % 2, ow % 2, n, k, od / 2, oh / 2, ow / 2]
//
// with T = ceildiv(R, s) taps per phase and S = T - 1 - P / s the padding that keeps every read
// of the copy in range, so the new stage has no guards at all (a register tile over k x ow_q is a
// plain direct convolution). The padded copies cost one pass over the input and the weights; the
// phases' points past the output (od_q * 2 + od_p >= OD when OD is odd) are computed and never
// read. Requirements: S a sum reduction at root with its default loops, its body a product
// whose one select factor is exactly such a conjunction guarding an input read with `else 0`,
// and one other factor, a read of a tensor indexed by the decomposed reduction vars as plain
// indices; every other index plain and within its tensor.
#include <algorithm>
#include <map>
#include <vector>

#include "schedule/primitives_internal.h"
#include "schedule/te_util.h"

namespace kf::sched::detail {
namespace {

using te::Expr;
using te::ExprKind;
using te::Op;
using te::RefKind;

// One decomposed pair: output var `o` (index into S.vars), reduction var `r` (into
// S.reduce_vars), offset P and stride s of the guard (o + P - r) % s == 0.
struct Phase {
  int o = -1, r = -1;
  int64_t offset = 0, stride = 0;
};

bool is_int(const Expr& e, int64_t v) {
  return e.kind == ExprKind::number && e.type == te::ValueType::i64 &&
         e.number == static_cast<double>(v);
}

// e as sum(coef * var) + constant over index and reduction vars; false for anything else.
bool linear(const Expr& e, std::map<std::pair<RefKind, int>, int64_t>& coef, int64_t& c,
            int64_t sign) {
  if (e.kind == ExprKind::number && e.type == te::ValueType::i64) {
    c += sign * static_cast<int64_t>(e.number);
    return true;
  }
  if (e.kind == ExprKind::name &&
      (e.ref.kind == RefKind::index_var || e.ref.kind == RefKind::reduce_var)) {
    coef[{e.ref.kind, e.ref.index}] += sign;
    return true;
  }
  if (e.kind != ExprKind::call) return false;
  if (e.op == Op::add) return linear(e.args[0], coef, c, sign) && linear(e.args[1], coef, c, sign);
  if (e.op == Op::sub) return linear(e.args[0], coef, c, sign) && linear(e.args[1], coef, c, -sign);
  if (e.op == Op::neg) return linear(e.args[0], coef, c, -sign);
  return false;
}

// The pair guarded by `(o + P - r) % s == 0`, if e is such a conjunct.
std::optional<Phase> congruence(const Expr& e) {
  if (e.kind != ExprKind::call || e.op != Op::eq || !is_int(e.args[1], 0)) return std::nullopt;
  const Expr& m = e.args[0];
  if (m.kind != ExprKind::call || m.op != Op::mod) return std::nullopt;
  const auto s = const_int(m.args[1]);
  std::map<std::pair<RefKind, int>, int64_t> coef;
  int64_t c = 0;
  if (!s || *s < 2 || !linear(m.args[0], coef, c, 1) || c < 0) return std::nullopt;
  Phase ph;
  ph.offset = c;
  ph.stride = *s;
  for (const auto& [var, k] : coef) {
    if (k == 0) continue;
    if (var.first == RefKind::index_var && k == 1 && ph.o < 0)
      ph.o = var.second;
    else if (var.first == RefKind::reduce_var && k == -1 && ph.r < 0)
      ph.r = var.second;
    else
      return std::nullopt;
  }
  if (ph.o < 0 || ph.r < 0) return std::nullopt;
  return ph;
}

// Whether e is `(o + P - r) / s` for phase ph.
bool phase_index(const Expr& e, const Phase& ph) {
  if (e.kind != ExprKind::call || e.op != Op::div || const_int(e.args[1]) != ph.stride)
    return false;
  std::map<std::pair<RefKind, int>, int64_t> coef;
  int64_t c = 0;
  if (!linear(e.args[0], coef, c, 1) || c != ph.offset) return false;
  for (const auto& [var, k] : coef) {
    if (k == 0) continue;
    const bool o = var == std::pair{RefKind::index_var, ph.o} && k == 1;
    const bool r = var == std::pair{RefKind::reduce_var, ph.r} && k == -1;
    if (!o && !r) return false;
  }
  return coef[{RefKind::index_var, ph.o}] == 1 && coef[{RefKind::reduce_var, ph.r}] == -1;
}

void conjuncts(const Expr& e, std::vector<Expr>& out) {
  if (e.kind == ExprKind::call && e.op == Op::logical_and) {
    conjuncts(e.args[0], out);
    conjuncts(e.args[1], out);
  } else {
    out.push_back(e);
  }
}

bool uses_any(const Expr& e, const std::vector<Phase>& phases) {
  for (const Phase& ph : phases)
    if (uses_var(e, RefKind::index_var, ph.o) || uses_var(e, RefKind::reduce_var, ph.r))
      return true;
  return false;
}

Expr add(Expr a, Expr b) {
  return binary(Op::add, std::move(a), std::move(b));
}
Expr sub(Expr a, Expr b) {
  return binary(Op::sub, std::move(a), std::move(b));
}

// An access to tensor `of` (an input or a stage, as `of` refers to it) at `idx`, with `else 0`.
Expr padded_read(const Expr& of, std::vector<Expr> idx) {
  Expr a;
  a.kind = ExprKind::access;
  a.name = of.name;
  a.ref = of.ref;
  a.type = of.type;
  a.args = std::move(idx);
  a.args.push_back(float_lit(0));
  a.has_else = true;
  return a;
}

Stage copy_stage(const std::string& name, const std::string& of, const std::string& note,
                 te::ValueType type, std::vector<te::IndexVar> vars, Expr body) {
  Stage c;
  c.name = name;
  c.note = note;
  c.origin = StageOrigin::padded_copy;
  c.origin_of = of;
  c.type = type;
  c.vars = std::move(vars);
  c.body = std::move(body);
  c.loops = default_loops(c);
  c.storage_order = identity(c.vars.size());
  return c;
}

te::IndexVar range_var(const std::string& name, Expr hi) {
  te::IndexVar v;
  v.name = name;
  v.lo = int_lit(0);
  v.hi = std::move(hi);
  v.is_static = true;
  return v;
}

std::string unused(const Stage& s, std::string name) {
  auto taken = [&](const std::string& n) {
    for (const auto& v : s.vars)
      if (v.name == n) return true;
    for (const auto& v : s.reduce_vars)
      if (v.name == n) return true;
    return false;
  };
  while (taken(name)) name += "_";
  return name;
}

// What the new stages are built from: S, its phases (sorted by output var), the new stage's vars
// (the phases, then S's vars with each decomposed o as its quotient) and reduction vars (each
// decomposed r over T = ceildiv(R, s) taps).
struct PhaseSplit {
  const Stage& s;
  const std::vector<Phase>& phases;
  std::vector<te::IndexVar> vars, rvars;
  std::vector<Expr> taps;            // T per phase
  std::map<int, size_t> phase_of_o;  // S var -> index into phases

  // A copy's vars, what it reads of its source, and how the new stage reads it.
  struct Copy {
    std::vector<te::IndexVar> vars;
    std::vector<Expr> src, read;
  };

  size_t np() const { return phases.size(); }
  Expr var_at(size_t pos) const {
    return var_ref(RefKind::index_var, static_cast<int>(pos), vars[pos].name);
  }
  Expr q_of(const Phase& ph) const { return var_at(np() + static_cast<size_t>(ph.o)); }
  Expr p_of(size_t i) const { return var_at(i); }
  Expr t_of(size_t i) const {
    return var_ref(RefKind::reduce_var, phases[i].r, rvars[static_cast<size_t>(phases[i].r)].name);
  }
  // An expression over S's vars, over the new stage's.
  Expr rename(const Expr& x) const {
    return map_names(x, [&](const Expr& n) -> std::optional<Expr> {
      if (n.ref.kind != RefKind::index_var) return std::nullopt;
      return var_at(np() + static_cast<size_t>(n.ref.index));
    });
  }

  // The zero-padded copy of the input: shift S = T - 1 - P / s keeps q - t + (p + P) / s + S in
  // [0, ceildiv(O, s) + T).
  Copy padded_input(const Expr& in, const std::vector<int>& in_phase,
                    const std::vector<Expr>& in_ext) const {
    Copy c;
    for (size_t d = 0; d < in.index_count(); ++d) {
      const Expr& idx = in.args[d];
      if (in_phase[d] < 0) {
        std::string vname = idx.name;
        for (const te::IndexVar& v : c.vars)
          if (v.name == vname) vname = "d" + std::to_string(d);
        c.vars.push_back(range_var(vname, in_ext[d]));
        c.src.push_back(var_ref(RefKind::index_var, static_cast<int>(d), vname));
        c.read.push_back(rename(idx));
        continue;
      }
      const size_t pi = static_cast<size_t>(in_phase[d]);
      const Phase* ph = &phases[pi];
      const std::string vname = s.vars[static_cast<size_t>(ph->o)].name + "_x";
      const Expr shift = sub(taps[pi], int_lit(1 + ph->offset / ph->stride));
      c.vars.push_back(range_var(
          vname,
          add(binary(Op::ceildiv, s.vars[static_cast<size_t>(ph->o)].hi, int_lit(ph->stride)),
              taps[pi])));
      c.src.push_back(sub(var_ref(RefKind::index_var, static_cast<int>(d), vname), shift));
      c.read.push_back(add(
          sub(q_of(*ph), t_of(pi)),
          add(binary(Op::div, add(p_of(pi), int_lit(ph->offset)), int_lit(ph->stride)), shift)));
    }
    return c;
  }

  // The taps' copy, zero past R in the decomposed dims (s * T >= R).
  Copy padded_taps(const Expr& w, const std::vector<Expr>& w_ext) const {
    Copy c;
    for (size_t d = 0; d < w.args.size(); ++d) {
      const Expr& idx = w.args[d];
      std::optional<size_t> pi;
      for (size_t i = 0; i < np(); ++i)
        if (idx.kind == ExprKind::name && idx.ref.kind == RefKind::reduce_var &&
            idx.ref.index == phases[i].r)
          pi = i;
      const std::string vname =
          idx.kind == ExprKind::name ? idx.name + (pi ? "_w" : "") : "d" + std::to_string(d);
      c.vars.push_back(range_var(
          vname, pi ? binary(Op::mul, int_lit(phases[*pi].stride), taps[*pi]) : w_ext[d]));
      c.src.push_back(var_ref(RefKind::index_var, static_cast<int>(d), vname));
      if (!pi) {
        c.read.push_back(rename(idx));
        continue;
      }
      const Phase& ph = phases[*pi];
      c.read.push_back(
          add(binary(Op::mul, int_lit(ph.stride), t_of(*pi)),
              binary(Op::mod, add(p_of(*pi), int_lit(ph.offset)), int_lit(ph.stride))));
    }
    return c;
  }

  // S reads its phase: S[..., o, ...] = NEW[o % s..., ..., o / s, ...].
  std::vector<Expr> phase_read() const {
    std::vector<Expr> read;
    for (size_t i = 0; i < np(); ++i) {
      const Phase& f = phases[i];
      read.push_back(binary(Op::mod,
                            var_ref(RefKind::index_var, f.o, s.vars[static_cast<size_t>(f.o)].name),
                            int_lit(f.stride)));
    }
    for (size_t d = 0; d < s.vars.size(); ++d) {
      Expr v = var_ref(RefKind::index_var, static_cast<int>(d), s.vars[d].name);
      auto it = phase_of_o.find(static_cast<int>(d));
      read.push_back(it != phase_of_o.end() ? binary(Op::div, v, int_lit(phases[it->second].stride))
                                            : v);
    }
    return read;
  }
};

PhaseSplit make_phase_split(const Stage& s, const std::vector<Phase>& phases) {
  PhaseSplit b{
      .s = s, .phases = phases, .vars = {}, .rvars = s.reduce_vars, .taps = {}, .phase_of_o = {}};
  for (size_t i = 0; i < phases.size(); ++i) {
    const te::IndexVar& o = s.vars[static_cast<size_t>(phases[i].o)];
    b.phase_of_o[phases[i].o] = i;
    b.vars.push_back(range_var(unused(s, o.name + "_p"), int_lit(phases[i].stride)));
  }
  for (size_t d = 0; d < s.vars.size(); ++d) {
    auto it = b.phase_of_o.find(static_cast<int>(d));
    if (it == b.phase_of_o.end()) {
      b.vars.push_back(s.vars[d]);
      continue;
    }
    b.vars.push_back(
        range_var(unused(s, s.vars[d].name + "_q"),
                  binary(Op::ceildiv, s.vars[d].hi, int_lit(phases[it->second].stride))));
  }
  b.taps.resize(phases.size());
  for (size_t i = 0; i < phases.size(); ++i) {
    te::IndexVar& r = b.rvars[static_cast<size_t>(phases[i].r)];
    b.taps[i] = binary(Op::ceildiv, r.hi, int_lit(phases[i].stride));
    r = range_var(unused(s, r.name + "_t"), b.taps[i]);
  }
  return b;
}

// The factor of the body that is select((o + P - r) % s == 0 && ..., T[...] else 0, 0), with
// its phases; `guarded` stays -1 when none is.
void find_guarded_factor(const std::vector<Expr>& factors, int& guarded,
                         std::vector<Phase>& phases) {
  for (size_t f = 0; f < factors.size(); ++f) {
    const Expr& x = factors[f];
    if (x.kind != ExprKind::call || x.op != Op::select || guarded >= 0) continue;
    const Expr& in = x.args[1];
    if (x.args[2].kind != ExprKind::number || x.args[2].number != 0 ||
        in.kind != ExprKind::access || in.type != te::ValueType::f64 || !in.has_else ||
        in.args.back().kind != ExprKind::number || in.args.back().number != 0 ||
        (in.ref.kind != RefKind::input && in.ref.kind != RefKind::stage))
      continue;
    std::vector<Expr> cs;
    conjuncts(x.args[0], cs);
    std::vector<Phase> found;
    for (const Expr& c : cs) {
      auto ph = congruence(c);
      if (!ph) {
        found.clear();
        break;
      }
      for (const Phase& o : found)
        if (o.o == ph->o || o.r == ph->r) ph.reset();
      if (!ph) {
        found.clear();
        break;
      }
      found.push_back(*ph);
    }
    if (found.empty()) continue;
    guarded = static_cast<int>(f);
    phases = std::move(found);
  }
}

// For each index of the guarded input `in`, the phase it is the quotient of (-1: a plain
// variable over its extent). Fails when an index is neither.
Expected<std::vector<int>> input_phases(const Pipeline& p, const Stage& s, const Expr& in,
                                        const std::vector<Phase>& phases, const std::string& why) {
  const size_t np = phases.size();
  const std::vector<Expr> in_ext = tensor_extents(p, in.ref);
  std::vector<int> in_phase(in.index_count(), -1);
  for (size_t d = 0; d < in.index_count(); ++d) {
    const Expr& idx = in.args[d];
    for (size_t i = 0; i < np; ++i)
      if (phase_index(idx, phases[i]) &&
          std::find(in_phase.begin(), in_phase.end(), static_cast<int>(i)) == in_phase.end())
        in_phase[d] = static_cast<int>(i);
    if (in_phase[d] < 0 && (uses_any(idx, phases) || !surely_within(idx, s, in_ext[d])))
      return Status::error(why + in.name + "'s index " + te::to_string(idx) +
                           " is neither (o + P - r) / s nor a plain variable over its extent");
  }
  return in_phase;
}

// The one factor that reads the taps (the decomposed reduction vars), by plain reduction vars.
Expected<int> find_tap(const std::vector<Expr>& factors, int guarded,
                       const std::vector<Phase>& phases, const std::string& why) {
  int tap = -1;
  for (size_t f = 0; f < factors.size(); ++f) {
    if (static_cast<int>(f) == guarded || !uses_any(factors[f], phases)) continue;
    const Expr& w = factors[f];
    if (tap >= 0 || w.kind != ExprKind::access || w.has_else || w.type != te::ValueType::f64 ||
        (w.ref.kind != RefKind::input && w.ref.kind != RefKind::stage))
      return Status::error(why + "the decomposed reduction vars must be read by one tensor");
    for (const Expr& idx : w.args) {
      const bool plain_r = idx.kind == ExprKind::name && idx.ref.kind == RefKind::reduce_var;
      if (!plain_r && uses_any(idx, phases))
        return Status::error(why + w.name + " must index the taps by plain reduction vars");
      if (idx.kind == ExprKind::name && idx.ref.kind == RefKind::index_var)
        for (const Phase& ph : phases)
          if (idx.ref.index == ph.o) return Status::error(why + w.name + " reads an output var");
    }
    tap = static_cast<int>(f);
  }
  if (tap < 0) return Status::error(why + "no tensor is indexed by the taps");
  return tap;
}

}  // namespace

Status apply_phase_split(Pipeline& p, const Primitive& prim) {
  auto si = find_stage(p, prim.args[0], true);
  if (!si) return si.error();
  const std::string& name = prim.args[1];
  for (const std::string& n : {name, name + "_in", name + "_w"})
    KF_RETURN_IF_ERROR(check_new_stage_name(p, n));
  const Stage& s = p.stages[static_cast<size_t>(*si)];
  const std::string why = "phase_split " + s.name + ": ";
  if (!s.reduction || s.body.reduce_op != te::ReduceOp::sum || s.where || s.where_split ||
      s.is_recurrence())
    return Status::error(why + "needs a sum reduction (a transposed convolution)");
  if (s.type != te::ValueType::f64)
    return Status::error(why + "needs a floating-point stage (its padding is a float zero)");
  if (s.compute.kind != ComputeKind::root || !s.splits.empty() ||
      s.loops.size() != default_loops(s).size())
    return Status::error(why + "needs the stage at root with its default loops (apply it first)");

  std::vector<Expr> factors;
  flatten_product(s.body.args[0], factors);
  int guarded = -1;
  std::vector<Phase> phases;
  find_guarded_factor(factors, guarded, phases);
  if (guarded < 0)
    return Status::error(why +
                         "no factor of its body is select((o + P - r) % s == 0 && ..., "
                         "T[..., (o + P - r) / s, ...] else 0, 0)");
  // The phase vars come in the order of S's vars.
  std::sort(phases.begin(), phases.end(), [](const Phase& a, const Phase& b) { return a.o < b.o; });
  const size_t np = phases.size();
  const Expr& in = factors[static_cast<size_t>(guarded)].args[1];
  const std::vector<Expr> in_ext = tensor_extents(p, in.ref);
  auto found_phases = input_phases(p, s, in, phases, why);
  if (!found_phases) return found_phases.error();
  const std::vector<int>& in_phase = *found_phases;
  for (size_t i = 0; i < np; ++i) {
    const te::IndexVar& r = s.reduce_vars[static_cast<size_t>(phases[i].r)];
    if (std::find(in_phase.begin(), in_phase.end(), static_cast<int>(i)) == in_phase.end())
      return Status::error(why + in.name + " is not read at a phase's quotient");
    if (te::to_string(r.lo) != "0" || !r.is_static)
      return Status::error(why + "reduction var " + r.name + " must run over 0..R");
  }
  auto found_tap = find_tap(factors, guarded, phases, why);
  if (!found_tap) return found_tap.error();
  const int tap = *found_tap;
  const Expr& w = factors[static_cast<size_t>(tap)];

  const PhaseSplit b = make_phase_split(s, phases);
  const PhaseSplit::Copy in_c = b.padded_input(in, in_phase, in_ext);
  const PhaseSplit::Copy w_c = b.padded_taps(w, tensor_extents(p, w.ref));
  const int pos = *si;
  const std::string in_name = name + "_in", w_name = name + "_w";
  Stage in_copy =
      copy_stage(in_name, in.name, "padded copy of " + in.name + " for phase_split of " + s.name,
                 in.type, in_c.vars, padded_read(in, in_c.src));
  Stage w_copy =
      copy_stage(w_name, w.name, "padded copy of " + w.name + " for phase_split of " + s.name,
                 w.type, w_c.vars, padded_read(w, w_c.src));
  Expr product;
  for (size_t f = 0; f < factors.size(); ++f) {
    Expr x = static_cast<int>(f) == guarded ? stage_access(in_name, pos, in_c.read, in.type)
             : static_cast<int>(f) == tap   ? stage_access(w_name, pos + 1, w_c.read, w.type)
                                            : b.rename(factors[f]);
    product = f == 0 ? std::move(x) : binary(Op::mul, std::move(product), std::move(x));
  }
  Stage ph;
  ph.name = name;
  ph.note = "phase_split of " + s.name;
  ph.origin = StageOrigin::phase_split;
  ph.origin_of = s.name;
  ph.type = s.type;
  ph.vars = b.vars;
  ph.reduce_vars = b.rvars;
  ph.body = s.body;
  ph.body.args[0] = std::move(product);
  ph.reduction = true;
  ph.loops = default_loops(ph);
  ph.storage_order = identity(ph.vars.size());

  std::vector<Expr> read = b.phase_read();
  const te::ValueType type = s.type;
  p.insert_stage(pos, std::move(in_copy));
  p.insert_stage(pos + 1, std::move(w_copy));
  p.insert_stage(pos + 2, std::move(ph));
  Stage& z = p.stages[static_cast<size_t>(pos) + 3];
  z.body = stage_access(name, pos + 2, std::move(read), type);
  z.reduce_vars.clear();
  z.reduction = false;
  z.loops = default_loops(z);
  return ok_status();
}

}  // namespace kf::sched::detail
