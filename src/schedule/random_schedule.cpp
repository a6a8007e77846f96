#include "schedule/random_schedule.h"

#include <set>

#include "schedule/primitive_table.h"
#include "schedule/primitives.h"
#include "schedule/primitives_internal.h"

namespace kf::sched {

uint64_t Rng::next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {

std::vector<int> live_stages(const Pipeline& p) {
  std::vector<int> out;
  for (size_t i = 0; i < p.stages.size(); ++i)
    if (p.stages[i].compute.kind != ComputeKind::inlined && !p.stages[i].loops.empty())
      out.push_back(static_cast<int>(i));
  return out;
}

std::string fresh_loop(const Stage& s, const std::string& base) {
  std::set<std::string> used = detail::tree_names(s);
  if (!used.count(base)) return base;
  for (int i = 2;; ++i)
    if (!used.count(base + std::to_string(i))) return base + std::to_string(i);
}

std::string fresh_stage(const Pipeline& p, const std::string& base) {
  return unique_stage_name(p, base);
}

Primitive make(PrimitiveKind k, std::vector<std::string> args) {
  Primitive p;
  p.kind = k;
  p.args = std::move(args);
  return p;
}

// Tensors (inputs and stages) that stage s reads in its body.
std::vector<std::string> reads_of(const Pipeline& p, const Stage& s) {
  std::set<std::string> names;
  te::visit(s.body, [&](const te::Expr& e) {
    if (e.kind != te::ExprKind::access) return;
    if (e.ref.kind == te::RefKind::stage &&
        p.stages[e.ref.index].compute.kind == ComputeKind::inlined)
      return;
    names.insert(e.name);
  });
  return {names.begin(), names.end()};
}

}  // namespace

namespace {

const std::vector<int64_t> factors = {1, 2, 3, 4, 5, 7, 8, 16, 32};
const std::vector<std::string> lanes = {"", "4", "8", "16", "2"};

// A primitive kind, drawn by the table's random weights.
PrimitiveKind pick_kind(Rng& rng) {
  int total = 0;
  for (const PrimitiveInfo& w : primitive_table()) total += w.random_weight;
  int x = static_cast<int>(rng.below(static_cast<size_t>(total)));
  PrimitiveKind kind = PrimitiveKind::split;
  for (const PrimitiveInfo& w : primitive_table()) {
    if (x < w.random_weight) {
      kind = w.kind;
      break;
    }
    x -= w.random_weight;
  }
  return kind;
}

// A move on stage s's own loops; nullopt when `kind` is not one, or s has too few loops.
std::optional<Primitive> loop_move(PrimitiveKind kind, const Stage& s, Rng& rng) {
  auto loop = [&]() -> std::string { return s.loops.empty() ? "x" : rng.pick(s.loops).name; };
  auto ref = [&](const std::string& l) { return s.name + "." + l; };
  switch (kind) {
    case PrimitiveKind::split: {
      const std::string l = loop();
      return make(kind, {ref(l), fresh_loop(s, l + ".o"), fresh_loop(s, l + ".i"),
                         std::to_string(rng.pick(factors))});
    }
    case PrimitiveKind::tile: {
      if (s.loops.size() < 2) break;
      const size_t i = rng.below(s.loops.size() - 1);
      return make(kind, {s.name, s.loops[i].name, s.loops[i + 1].name,
                         std::to_string(rng.pick(factors)), std::to_string(rng.pick(factors))});
    }
    case PrimitiveKind::reorder: {
      if (s.loops.size() < 2) break;
      std::vector<std::string> args = {s.name};
      const size_t a = rng.below(s.loops.size());
      size_t b = rng.below(s.loops.size() - 1);
      if (b >= a) ++b;
      args.push_back(s.loops[std::max(a, b)].name);  // the inner one moves out
      args.push_back(s.loops[std::min(a, b)].name);
      return make(kind, args);
    }
    case PrimitiveKind::fuse: {
      if (s.loops.size() < 2) break;
      const size_t i = rng.below(s.loops.size() - 1);
      return make(kind, {s.name, s.loops[i].name, s.loops[i + 1].name,
                         fresh_loop(s, s.loops[i].name + "_" + s.loops[i + 1].name)});
    }
    case PrimitiveKind::vectorize: {
      std::vector<std::string> args = {ref(loop())};
      const std::string& w = rng.pick(lanes);
      if (!w.empty()) args.push_back(w);
      return make(kind, args);
    }
    case PrimitiveKind::unroll:
      return make(kind, {ref(loop())});
    case PrimitiveKind::parallel:
      return make(kind, {ref(loop())});
    default:
      break;
  }
  return std::nullopt;
}

}  // namespace

Primitive random_move(const Pipeline& p, Rng& rng) {
  const PrimitiveKind kind = pick_kind(rng);
  const std::vector<int> live = live_stages(p);
  const Stage& s = p.stages[live.empty() ? 0 : rng.pick(live)];
  auto loop = [&]() -> std::string { return s.loops.empty() ? "x" : rng.pick(s.loops).name; };
  auto ref = [&](const std::string& l) { return s.name + "." + l; };
  if (auto m = loop_move(kind, s, rng)) return *m;
  switch (kind) {
    case PrimitiveKind::split:  // loop_move's, with too few loops for them
    case PrimitiveKind::tile:
    case PrimitiveKind::reorder:
    case PrimitiveKind::fuse:
    case PrimitiveKind::vectorize:
    case PrimitiveKind::unroll:
    case PrimitiveKind::parallel:
      break;
    case PrimitiveKind::compute_at: {
      const int si = p.find(s.name);
      std::vector<int> cons = p.consumers(si);
      if (cons.empty()) break;
      const Stage& c = p.stages[rng.pick(cons)];
      if (c.loops.empty()) break;
      return make(kind, {s.name, c.name + "." + rng.pick(c.loops).name});
    }
    case PrimitiveKind::compute_inline:
      return make(kind, {s.name});
    case PrimitiveKind::compute_root:
      return make(kind, {s.name});
    case PrimitiveKind::cache_read: {
      std::vector<std::string> reads = reads_of(p, s);
      if (reads.empty()) break;
      const std::string& t = rng.pick(reads);
      return make(kind, {t, s.name, fresh_stage(p, t + "_c")});
    }
    case PrimitiveKind::cache_write:
      return make(kind, {s.name, fresh_stage(p, s.name + "_w")});
    case PrimitiveKind::phase_split:
      return make(kind, {s.name, fresh_stage(p, s.name + "_ph")});
    case PrimitiveKind::online_softmax:
      return make(kind, {s.name});
    case PrimitiveKind::rfactor: {
      std::vector<std::string> red;
      for (const Loop& l : s.loops)
        if (l.reduce) red.push_back(l.name);
      if (red.empty()) break;
      return make(kind, {ref(rng.pick(red)), fresh_stage(p, s.name + "_rf")});
    }
    case PrimitiveKind::nontemporal:
    case PrimitiveKind::reciprocal:
    case PrimitiveKind::approximate:
    case PrimitiveKind::hoist_gathers:
      return make(kind, {s.name});
    case PrimitiveKind::mask_range:
      return rng.below(2) ? make(kind, {s.name})
                          : make(kind, {s.name, fresh_stage(p, s.name + "_m")});
    case PrimitiveKind::align_storage: {
      const std::string w = rng.pick(lanes);
      return w.empty() ? make(kind, {s.name}) : make(kind, {s.name, w});
    }
    case PrimitiveKind::vectorize_reductions: {
      const std::string w = rng.pick(lanes);
      return w.empty() ? make(kind, {s.name}) : make(kind, {s.name, w});
    }
    case PrimitiveKind::hoist: {
      if (s.vars.empty()) break;
      return make(kind, {s.name, fresh_stage(p, s.name + "_h"), rng.pick(s.vars).name});
    }
    case PrimitiveKind::prefetch:
      return make(kind, {ref(loop()), std::to_string(rng.pick(factors) * 16)});
    case PrimitiveKind::specialize_uniform:
      return make(kind, {ref(loop())});
    case PrimitiveKind::double_buffer: {
      // The rows go into a loop of any live stage; apply_primitive rejects what cannot work.
      if (live.empty()) break;
      const Stage& c = p.stages[rng.pick(live)];
      if (c.loops.empty()) break;
      static const std::vector<int64_t> every = {1, 2, 4, 32};
      return make(kind,
                  {s.name, c.name + "." + rng.pick(c.loops).name, std::to_string(rng.pick(every))});
    }
    case PrimitiveKind::reorder_storage: {
      if (s.vars.size() < 2) break;
      std::vector<std::string> args = {s.name};
      std::vector<std::string> dims;
      for (const te::IndexVar& v : s.vars) dims.push_back(v.name);
      for (size_t i = dims.size(); i > 1; --i) std::swap(dims[i - 1], dims[rng.below(i)]);
      args.insert(args.end(), dims.begin(), dims.end());
      return make(kind, args);
    }
  }
  return make(PrimitiveKind::compute_root, {s.name});
}

Schedule random_schedule(const Pipeline& p, uint64_t seed, const RandomScheduleOptions& options) {
  Rng rng(seed);
  Pipeline work = p;
  Schedule s;
  s.file = "random-" + std::to_string(seed);
  for (int a = 0; a < options.attempts && static_cast<int>(s.steps.size()) < options.moves; ++a) {
    Primitive m = random_move(work, rng);
    if (!apply_primitive(work, m).ok()) continue;
    m.line = static_cast<int>(s.steps.size()) + 1;
    s.steps.push_back(m);
  }
  return s;
}

}  // namespace kf::sched
