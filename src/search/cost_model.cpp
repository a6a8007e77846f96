// The analytic cost model (cost_model.h): reading a lowered loop nest's features at the bench
// shape, and pricing them on the machine.
#include "search/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <set>

#include "codegen/vector_registers.h"
#include "ir/ir_printer.h"
#include "ir/ir_visitor.h"
#include "ir/simplify.h"
#include "ir/substitute.h"
#include "lower/interval.h"
#include "lower/lower.h"
#include "schedule/trace.h"

namespace kf::search {
namespace {

using lowering::Interval;
using lowering::Scope;

// A cache line: a strided access brings in at least one line per element it touches, so a
// footprint counts max(line, access) bytes per distinct address (x86 lines are 64 bytes).
constexpr double kLineBytes = 64;

// Iterations of a loop once the dims are bound: its constant extent, else a constant upper bound
// (a tail `min(6, M - i.o*6)` counts 6; a triangular loop its longest row), else 1 (an extent
// read from data is unknown: the loop is counted once rather than guessed).
double trips(const ir::For* op) {
  if (auto c = ir::as_const_int(op->extent)) return static_cast<double>(std::max<int64_t>(0, *c));
  if (auto u = lowering::const_upper_bound(op->extent))
    return static_cast<double>(std::max<int64_t>(0, *u));
  return 1;
}

// The widest vector any node of an expression computes: the lanes a statement's work runs at
// (a horizontal reduction stores a scalar of work done at the lanes of its operand).
class MaxLanes : public ir::IRVisitor {
 public:
  int lanes = 1;

 protected:
  void visit_load(const ir::Load* op) override {
    lanes = std::max(lanes, op->type.lanes());
    IRVisitor::visit_load(op);
  }
  void visit_binary(const ir::Binary* op) override {
    lanes = std::max(lanes, op->type.lanes());
    IRVisitor::visit_binary(op);
  }
  void visit_call(const ir::Call* op) override {
    lanes = std::max(lanes, op->type.lanes());
    IRVisitor::visit_call(op);
  }
};

int work_lanes(const ir::Expr& value) {
  MaxLanes m;
  m.visit(value);
  return std::max(m.lanes, value.type().lanes());
}

// Memory instructions of one access: a scalar or dense (Ramp) index is one instruction, any
// other vector index a gather or scatter of one per lane.
double access_instructions(const ir::Expr& index, int lanes) {
  if (index.type().is_scalar() || index.as<ir::Ramp>() || index.as<ir::Broadcast>()) return 1;
  return lanes;
}

// The sizes of every buffer (tensors at the bench shape, allocations with a constant extent) and
// the stack buffers codegen keeps in vector registers (promotable_vector_lanes: a register tile
// is no memory traffic).
struct BufferTable {
  std::map<std::string, double> bytes;
  std::set<std::string> registers;
};

class CollectBuffers : public ir::IRVisitor {
 public:
  BufferTable* table = nullptr;

 protected:
  void visit_allocate(const ir::Allocate* op) override {
    if (op->memory == ir::MemoryKind::stack && promotable_vector_lanes(*op) > 0)
      table->registers.insert(op->name);
    if (auto n = ir::as_const_int(op->extent))
      table->bytes[op->name] =
          static_cast<double>(*n) * op->element_type.bytes() * op->element_type.lanes();
    IRVisitor::visit_allocate(op);
  }
};

// Work, vector work, parallel work and memory instructions of a statement, each iteration of
// each loop counted (the work of a statement is the elements it computes: its widest lanes).
class WorkWalker : public ir::IRVisitor {
 public:
  explicit WorkWalker(const BufferTable& t) : table_(t) {}
  void walk(const ir::For* op) { visit_for(op); }
  double work = 0, vector_work = 0, parallel_work = 0, memory_ops = 0;
  std::map<int, double> work_by_lanes;        // vector lanes -> work at that width
  std::map<double, double> work_by_parallel;  // parallel loop trips -> work under it

 protected:
  void visit_for(const ir::For* op) override {
    const double saved = mult_, saved_par = parallel_trips_;
    const double t = trips(op);
    mult_ *= t;
    if (op->for_kind == ir::ForKind::parallel && parallel_trips_ == 0) parallel_trips_ = t;
    std::set<std::string> outer_loads;
    std::swap(outer_loads, loaded_);
    visit(op->body);
    std::swap(outer_loads, loaded_);
    mult_ = saved;
    parallel_trips_ = saved_par;
  }
  void visit_store(const ir::Store* op) override {
    add_work(mult_ * work_lanes(op->value), work_lanes(op->value));
    IRVisitor::visit_store(op);
    add_access(op->buffer, op->index, op->value.type().lanes());
    // Loads of the buffer after this store read what it wrote: they are not the same values.
    const std::string prefix = op->buffer + "[";
    for (auto it = loaded_.lower_bound(prefix); it != loaded_.end() && it->starts_with(prefix);)
      it = loaded_.erase(it);
  }
  void visit_load(const ir::Load* op) override {
    // The compiler loads a value once per loop body however often the body reads it (common
    // subexpressions: each row of a register tile reads the same vector of B).
    if (loaded_.insert(op->buffer + "[" + ir::to_string(op->index) + "]").second)
      add_access(op->buffer, op->index, op->type.lanes());
    IRVisitor::visit_load(op);
  }
  void visit_transpose_block(const ir::TransposeBlock* op) override {
    add_work(mult_ * op->lanes * op->lanes, op->lanes);
    memory_ops += mult_ * 2 * op->lanes;  // `lanes` rows loaded, `lanes` rows stored
  }

 private:
  void add_work(double elements, int lanes) {
    work += elements;
    if (lanes > 1) {
      vector_work += elements;
      work_by_lanes[lanes] += elements;
    }
    if (parallel_trips_ > 0) {
      parallel_work += elements;
      work_by_parallel[parallel_trips_] += elements;
    }
  }
  void add_access(const std::string& buffer, const ir::Expr& index, int lanes) {
    if (!table_.registers.count(buffer)) memory_ops += mult_ * access_instructions(index, lanes);
  }
  const BufferTable& table_;
  double mult_ = 1, parallel_trips_ = 0;
  std::set<std::string> loaded_;  // buffer[index] of the loads of the current loop body
};

// The loops of a statement that no other loop of it encloses.
class ChildLoops : public ir::IRVisitor {
 public:
  std::vector<const ir::For*> loops;

 protected:
  void visit_for(const ir::For* op) override { loops.push_back(op); }
};

const ir::For* hottest_child(const ir::Stmt& s, const BufferTable& t) {
  ChildLoops c;
  c.visit(s);
  const ir::For* best = nullptr;
  double best_work = -1;
  for (const ir::For* f : c.loops) {
    WorkWalker w(t);
    w.walk(f);
    if (w.work > best_work) best = f, best_work = w.work;
  }
  return best;
}

// One buffer's accesses inside a loop: the hull of their indices, and how many distinct
// addresses they touch (the product of the iterations of the loops an index reads).
struct BufferUse {
  Interval hull;
  bool bounded = true, seen = false;
  double element_bytes = 4, line_bytes = 0;
  std::set<std::string> indices;  // the distinct indices seen (as text)
};

// The bytes a loop touches over all its iterations (its footprint): per buffer, the smaller of
// the index hull's span and one cache line per distinct address; loops outside it are fixed.
// An upper bound: reuse between consecutive executions of the loop (shared lines) is not
// credited.
class Footprint : public ir::IRVisitor {
 public:
  explicit Footprint(const BufferTable& t) : table_(t) {}
  void walk(const ir::For* op) { visit_for(op); }
  double bytes() const;

 protected:
  void visit_for(const ir::For* op) override {
    ir::Expr last = ir::simplify(op->min + op->extent - 1);
    scope_[op->name] = Interval{op->min, last, true};
    points_[op->name] = trips(op);
    visit(op->body);
    scope_.erase(op->name);
    points_.erase(op->name);
  }
  void visit_let_stmt(const ir::LetStmt* op) override {
    scope_[op->name] = lowering::bounds_of(op->value, scope_);
    points_[op->name] = points_of(op->value);
    visit(op->body);
    scope_.erase(op->name);
    points_.erase(op->name);
  }
  void visit_load(const ir::Load* op) override {
    add(op->buffer, op->index, op->type);
    IRVisitor::visit_load(op);
  }
  void visit_store(const ir::Store* op) override {
    add(op->buffer, op->index, op->value.type());
    IRVisitor::visit_store(op);
  }

 private:
  double points_of(const ir::Expr& e) const {
    double n = 1;
    for (const auto& [name, p] : points_)
      if (ir::expr_uses_var(e, name)) n *= p;
    return n;
  }
  Interval index_interval(const ir::Expr& index) const {
    if (const auto* r = index.as<ir::Ramp>()) {
      auto stride = ir::as_const_int(r->stride);
      Interval b = lowering::bounds_of(r->base, scope_);
      if (!stride || *stride < 0 || !b.bounded()) return Interval::everything();
      return Interval{b.min, b.max + *stride * (r->lanes - 1), b.exact};
    }
    if (const auto* b = index.as<ir::Broadcast>()) return lowering::bounds_of(b->value, scope_);
    if (index.type().is_vector()) return Interval::everything();  // a gather's lanes
    return lowering::bounds_of(index, scope_);
  }
  void add(const std::string& buffer, const ir::Expr& index, ir::Type type) {
    if (table_.registers.count(buffer)) return;
    BufferUse& u = uses_[buffer];
    // A scalar index into a buffer of vectors addresses whole vectors.
    const double eb = type.scalar().bytes() * (index.type().is_scalar() ? type.lanes() : 1);
    const double access = eb * (index.type().is_scalar() ? 1 : type.lanes());
    u.element_bytes = std::max(u.element_bytes, eb);
    // Lines are counted per distinct index: a load and a store of one element are one line,
    // two vectors side by side two.
    if (u.indices.insert(ir::to_string(index)).second)
      u.line_bytes += points_of(index) * std::max(kLineBytes, access);
    Interval iv = index_interval(index);
    if (!iv.bounded()) u.bounded = false;
    if (u.bounded) u.hull = u.seen ? lowering::hull(u.hull, iv) : iv;
    u.seen = true;
  }
  const BufferTable& table_;
  Scope scope_;
  std::map<std::string, double> points_;
  std::map<std::string, BufferUse> uses_;
};

double Footprint::bytes() const {
  double total = 0;
  for (const auto& [name, u] : uses_) {
    auto size = table_.bytes.find(name);
    double b = u.line_bytes;
    if (u.bounded && u.hull.bounded()) {
      ir::Expr span = lowering::simplify_linear(u.hull.max - u.hull.min + 1);
      auto n = ir::as_const_int(span);
      if (!n) n = lowering::const_upper_bound(span);
      if (n) b = std::min(b, static_cast<double>(std::max<int64_t>(*n, 0)) * u.element_bytes);
    }
    if (size != table_.bytes.end()) b = std::min(b, size->second);
    total += b;
  }
  return total;
}

double footprint(const ir::For* op, const BufferTable& t) {
  Footprint f(t);
  f.walk(op);
  return f.bytes();
}

// Walks the hot path (the hottest top-level nest, then at each level the child loop with the
// most work) down to the tile: the outermost loop whose footprint fits L2, where the data it
// reuses stays between its iterations; every execution of the tile fetches its footprint again.
void find_tile(const ir::Stmt& body, const BufferTable& t, double l2_bytes, CostFeatures& f) {
  const ir::For* loop = hottest_child(body, t);
  if (!loop) return;
  f.nest_bytes = footprint(loop, t);
  double executions = 1;
  for (int depth = 0; loop && depth < 64; ++depth) {
    const double fp = footprint(loop, t);
    const ir::For* child = hottest_child(loop->body, t);
    if (fp <= l2_bytes || !child) {
      f.tile = loop->name;
      f.working_set_bytes = fp;
      f.refetch_bytes = executions * fp;
      return;
    }
    executions *= std::max(1.0, trips(loop));
    loop = child;
  }
}

// The key with the largest value of a map (its first key on ties); `fallback` when empty.
template <typename K>
K dominant(const std::map<K, double>& m, K fallback) {
  double best = -1;
  for (const auto& [k, v] : m)
    if (v > best) best = v, fallback = k;
  return fallback;
}

}  // namespace

CostFeatures read_features(const ir::LoweredFunc& func, const Task& task, const ShapeInstance& inst,
                           double l2_bytes, int threads) {
  CostFeatures f;
  f.flops = inst.flops;
  f.bytes = inst.bytes;
  f.threads = threads;
  f.known = true;
  std::map<std::string, ir::Expr> shape;
  for (size_t i = 0; i < task.dims.size() && i < inst.dims.size(); ++i)
    shape[task.dims[i]] = ir::i64(inst.dims[i]);
  shape[ir::kNumThreadsVar] = ir::i64(std::max(1, threads));
  const ir::Stmt body = ir::simplify(ir::substitute(shape, func.body));

  BufferTable table;
  for (size_t i = 0; i < task.tensor_count() && i < inst.elements.size(); ++i)
    table.bytes[task.tensor(i).name] = static_cast<double>(inst.elements[i]) *
                                       static_cast<double>(dtype_size(task.tensor(i).dtype));
  CollectBuffers cb;
  cb.table = &table;
  cb.visit(body);

  WorkWalker w(table);
  w.visit(body);
  f.work = w.work;
  f.memory_ops = w.memory_ops;
  if (w.work > 0) {
    f.vector_share = w.vector_work / w.work;
    f.parallel_share = w.parallel_work / w.work;
  }
  f.vector_lanes = dominant(w.work_by_lanes, 1);
  f.parallel_trips = dominant(w.work_by_parallel, 0.0);
  find_tile(body, table, l2_bytes, f);
  return f;
}

namespace {

// Stand-ins for an unprobed machine (a zero or non-finite figure): a nominal AVX2-class core.
// A ranking compares the candidates of one task on one machine, and their order does not depend
// on the scale of these figures, only on their ratios, which are those of the development
// machine (docs MACHINE.md): peak : L2 triad : DRAM triad of about 100 : 100 : 20 per core.
constexpr double kStandInPeakGflops = 100, kStandInCacheGbps = 100, kStandInDramGbps = 20;
constexpr double kStandInL2Bytes = 1 << 20, kStandInL3Bytes = 32 << 20;

bool usable(double x) {
  return std::isfinite(x) && x > 0;
}

// The machine's figures at one thread and at `threads`, with stand-ins where it has none.
struct Figures {
  double peak_1t = 0, peak_t = 0;    // GFLOP/s
  double dram_1t = 0, dram_t = 0;    // GB/s
  double cache_1t = 0, cache_t = 0;  // GB/s, L2-resident
  double l2 = 0, l3 = 0;             // bytes (L2 per core)
  int lanes = 16;                    // f32 lanes of the target's vectors
  std::vector<std::string> stand_ins;
};

Figures figures(const MachineInfo& m, const Target& target, int threads) {
  Figures g;
  auto pick = [&](double v, double stand_in, const char* name) {
    if (usable(v)) return v;
    g.stand_ins.push_back(name);
    return stand_in;
  };
  g.peak_1t = pick(m.peak_gflops_1t, kStandInPeakGflops, "peak");
  g.dram_1t = pick(m.dram_gbps_1t, kStandInDramGbps, "DRAM bandwidth");
  g.cache_1t = pick(m.cache_gbps_1t, kStandInCacheGbps, "L2 bandwidth");
  g.l2 = pick(static_cast<double>(m.l2_bytes), kStandInL2Bytes, "L2 size");
  g.l3 = pick(static_cast<double>(m.l3_bytes), kStandInL3Bytes, "L3 size");
  g.lanes = std::clamp(target.f32_lanes, 1, 64);
  // More threads never lower a ceiling: the machine's interpolation, floored at one thread's
  // figure (a probe that measured the all-core figure below the one-core one is noise). Without
  // an all-core measurement the peak and the per-core caches scale with the threads (they are
  // per core) and DRAM stays at one thread's (it is shared: the cautious guess).
  const double t = std::max(1, threads);
  const double peak_all = m.peak_gflops(threads), dram_all = m.dram_gbps(threads);
  g.peak_t = usable(peak_all) ? std::max(peak_all, g.peak_1t) : g.peak_1t * t;
  g.dram_t = usable(dram_all) ? std::max(dram_all, g.dram_1t) : g.dram_1t;
  g.cache_t = g.cache_1t * t;
  return g;
}

// Seconds for `amount` units at rate r1 on one core for the serial share and r_t for the
// parallel share `p` (Amdahl).
double amdahl(double amount, double p, double r1, double r_t) {
  return amount * ((1 - p) / r1 + p / r_t);
}

std::string bytes_text(double b) {
  if (b >= 1 << 30) return fmt::format("{:.1f} GiB", b / (1 << 30));
  if (b >= 1 << 20) return fmt::format("{:.1f} MiB", b / (1 << 20));
  return fmt::format("{:.0f} KiB", b / 1024);
}

}  // namespace

CostEstimate estimate_from_features(const CostFeatures& in, const MachineInfo& machine,
                                    const Target& target, int threads) {
  CostEstimate e;
  e.features = in;
  CostFeatures& f = e.features;
  f.threads = std::max(1, threads);
  auto clean = [](double x) { return std::isfinite(x) && x > 0 ? x : 0.0; };
  f.flops = clean(f.flops), f.bytes = clean(f.bytes), f.memory_ops = clean(f.memory_ops);
  f.refetch_bytes = clean(f.refetch_bytes), f.nest_bytes = clean(f.nest_bytes);
  f.vector_share = std::clamp(clean(f.vector_share), 0.0, 1.0);
  f.parallel_share = std::clamp(clean(f.parallel_share), 0.0, 1.0);
  f.vector_lanes = std::max(1, f.vector_lanes);

  // Written source: its shares are unknown, so it is priced as the roofline prices it (all
  // work vectorized at the target's width and spread over every thread).
  const double p = f.known ? f.parallel_share : 1.0;
  const double vs = f.known ? f.vector_share : 1.0;
  // The parallel share runs on no more threads than its loop has iterations.
  const int par_threads =
      f.known && f.parallel_trips >= 1
          ? static_cast<int>(std::min<double>(f.threads, std::floor(f.parallel_trips)))
          : f.threads;
  const Figures g = figures(machine, target, par_threads);

  // Compute: scalar work runs at 1/lanes of the FMA peak, vector work at W of the target's
  // lanes (W capped at the target's width: wider vectors are split into several registers).
  const double w = f.known ? std::min(f.vector_lanes, g.lanes) : g.lanes;
  const double lane_cost = vs * g.lanes / w + (1 - vs) * g.lanes;
  const double compute_s = amdahl(f.flops * 1e-9 * lane_cost, p, g.peak_1t, g.peak_t);

  // Memory: the compulsory bytes come from the level the task's data fits (the L2 of the cores
  // used, else L3, else DRAM). L3 is not probed: its bandwidth is taken as the geometric mean of
  // L2's and DRAM's (on the development machine that is within 15% of the measured L3 triad).
  auto level_rates = [&](double data, double* r1, double* rt) {
    if (data <= g.l2 * par_threads)
      *r1 = g.cache_1t, *rt = g.cache_t;
    else if (data <= g.l3)
      *r1 = std::sqrt(g.cache_1t * g.dram_1t), *rt = std::sqrt(g.cache_t * g.dram_t);
    else
      *r1 = g.dram_1t, *rt = g.dram_t;
  };
  double r1 = 0, rt = 0;
  level_rates(f.bytes, &r1, &rt);
  double memory_s = amdahl(f.bytes * 1e-9, p, r1, rt);
  // A tile whose reuse does not stay in L2 fetches its working set again from L3 (the nest's
  // data fits it) or DRAM: the excess over the compulsory bytes.
  const double refetch = f.known ? std::max(0.0, f.refetch_bytes - f.bytes) : 0.0;
  if (refetch > 0) {
    if (f.nest_bytes <= g.l3)
      r1 = std::sqrt(g.cache_1t * g.dram_1t), rt = std::sqrt(g.cache_t * g.dram_t);
    else
      r1 = g.dram_1t, rt = g.dram_t;
    memory_s += amdahl(refetch * 1e-9, p, r1, rt);
  }

  // Cache: a core issues about as many loads and stores per cycle as FMAs (two of each on the
  // x86 cores kforge targets), so one memory instruction costs one FMA slot: the peak over the
  // flops of one FMA instruction (2 per lane).
  const double slots_1t = g.peak_1t * 1e9 / (2.0 * g.lanes);
  const double cache_s =
      f.known ? amdahl(f.memory_ops, p, slots_1t, slots_1t * g.peak_t / g.peak_1t) : 0.0;

  e.seconds = std::max({compute_s, memory_s, cache_s});
  e.bound = e.seconds == compute_s ? "compute" : e.seconds == memory_s ? "memory" : "cache";
  if (!std::isfinite(e.seconds)) e.seconds = 0, e.bound = "compute";
  e.why = fmt::format(
      "{}-bound: compute {:.3g} s ({:.3g} GFLOP at {:.0f} GFLOP/s, vector share {:.2f} at {} of "
      "{} lanes, parallel share {:.2f} on {} thread{}), memory {:.3g} s ({} + {} refetched), "
      "cache {:.3g} s ({:.3g} loads/stores)",
      e.bound, compute_s, f.flops * 1e-9, g.peak_t, vs, static_cast<int>(w), g.lanes, p,
      par_threads, par_threads == 1 ? "" : "s", memory_s, bytes_text(f.bytes), bytes_text(refetch),
      cache_s, f.memory_ops);
  if (f.known && !f.tile.empty())
    e.why += fmt::format("; tile {} works on {} ({} L2)", f.tile, bytes_text(f.working_set_bytes),
                         f.working_set_bytes <= g.l2 ? "fits" : "exceeds");
  if (!g.stand_ins.empty()) {
    std::string names;
    for (const std::string& s : g.stand_ins) names += (names.empty() ? "" : ", ") + s;
    e.why += "; unprobed machine, stand-in " + names;
  }
  return e;
}

namespace {

// The features of a generated candidate, or why there are none.
Expected<CostFeatures> generated_features(const CompiledTask& task, const agents::CandidateMsg& c,
                                          const ShapeInstance& inst, const MachineInfo& machine,
                                          const Target& target, int threads) {
  if (!c.generated) return Status::error("not generated: roofline only");
  if (!task.program) return Status::error("the task has no TE spec: roofline only");
  auto schedule = sched::parse_schedule(c.generated->schedule, "candidate schedule");
  if (!schedule) return Status::error("schedule does not parse: " + schedule.error().message());
  // Lowering is bounded (lower.h) and a proposal that takes long to lower is not worth ranking
  // for longer than a compile would take.
  LowerOptions lo{.target = target.codegen, .dump = {}, .deadline_s = 10};
  auto func = lower(task.task, *task.program, *schedule, lo);
  if (!func) return Status::error("schedule does not lower: " + func.error().message());
  const double l2 = usable(static_cast<double>(machine.l2_bytes))
                        ? static_cast<double>(machine.l2_bytes)
                        : kStandInL2Bytes;
  return read_features(*func, task.task, inst, l2, threads);
}

}  // namespace

CostEstimate estimate_cost(const CompiledTask& task, const agents::CandidateMsg& c,
                           const MachineInfo& machine, const Target& target, int threads) {
  CostFeatures f;
  f.threads = threads;
  std::string note;
  try {
    auto inst = task.task.instantiate(task.task.bench);
    if (!inst) {
      note = "the bench shape does not instantiate: " + inst.error().message();
    } else {
      f.flops = inst->flops;
      f.bytes = inst->bytes;
      auto read = generated_features(task, c, *inst, machine, target, threads);
      if (read)
        f = *read;
      else
        note = read.error().message();
    }
  } catch (const std::exception& ex) {
    f.known = false;
    note = std::string("reading the candidate failed: ") + ex.what();
  }
  CostEstimate e = estimate_from_features(f, machine, target, threads);
  if (!note.empty()) e.why = note + "; " + e.why;
  return e;
}

}  // namespace kf::search
