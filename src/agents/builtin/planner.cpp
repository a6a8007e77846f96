// The built-in planner: rules over the evidence and the pipeline's structure. Each rule that
// fires proposes a strategy with an expected speedup from a simple model; the best-ranked
// strategy that has not been tried from the current best, and that has at least one legal move
// here, becomes the plan.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "agents/builtin/brain.h"
#include "agents/builtin/moves.h"
#include "schedule/primitives.h"

namespace kf::agents::builtin {
namespace {

// The stages computed at the top level whose time includes stage `i`'s: itself, the stage it is
// computed in (transitively), or for an inlined stage its readers'.
void top_level_hosts(const sched::Pipeline& p, int i, std::set<std::string>& out, int depth = 0) {
  if (i < 0 || depth > static_cast<int>(p.stages.size())) return;
  const sched::Stage& s = p.stages[static_cast<size_t>(i)];
  if (s.compute.kind == sched::ComputeKind::root) {
    out.insert(s.name);
  } else if (s.compute.kind == sched::ComputeKind::at) {
    top_level_hosts(p, p.find(s.compute.stage), out, depth + 1);
  } else {
    for (int r : p.readers(i)) top_level_hosts(p, r, out, depth + 1);
  }
}

// Whether stage `name` is a copy-out: its results are accumulated by a cache_write stage
// computed inside it, where the time its timer measures is spent.
bool copy_out(const sched::Pipeline& p, const std::string& name,
              const std::set<std::string>& named) {
  for (const auto& c : p.stages)
    if (c.origin == sched::StageOrigin::cache_write && c.origin_of == name &&
        c.compute.kind == sched::ComputeKind::at && c.compute.stage == name && !named.count(c.name))
      return true;
  return false;
}

// The move groups of the strategy that apply to this pipeline, as the top-level stages whose
// time they change (the stages their primitives name, placed where they are computed). Empty:
// the strategy does not apply here. `light`: stages named only for their copy-out loops (04's
// s after accumulate_locally: its timer counts the accumulator's dot products computed inside
// it, which vectorizing the copy does not touch).
std::set<std::string> touched_stages(const std::string& id, const sched::Pipeline& p,
                                     const MoveContext& ctx, std::set<std::string>* light,
                                     std::set<std::string>* locality) {
  std::set<std::string> touched;
  const Strategy* s = find_strategy(id);
  if (!s || !s->moves) return touched;
  auto groups = s->moves(p, s->default_knobs(), ctx);
  if (!groups) return touched;
  // Applied in turn as the recipe applies them: a group may need the ones before it (01's
  // scores fuse into o's rows once the softmax stages reading them are there).
  sched::Pipeline work = p;
  for (const MoveGroup& g : *groups) {
    sched::Pipeline trial = work;
    bool ok = true;
    for (const auto& m : g.moves)
      if (!sched::apply_primitive(trial, m).ok()) {
        ok = false;
        break;
      }
    if (!ok) continue;
    work = std::move(trial);
    std::set<std::string> named{g.target};
    // Each primitive's target (STAGE or STAGE.LOOP), and the stage a compute_at places it in or
    // a cache_read copies for; other arguments are new names or numbers.
    for (const auto& m : g.moves) {
      const bool second =
          m.kind == sched::PrimitiveKind::compute_at || m.kind == sched::PrimitiveKind::cache_read;
      for (size_t a = 0; a < m.args.size() && a < (second ? 2u : 1u); ++a)
        named.insert(m.args[a].substr(0, m.args[a].find('.')));
      // A specialized loop's body is everything computed inside it: the tile's accumulator,
      // not only the copy-out loops of the stage it belongs to.
      if (m.kind == sched::PrimitiveKind::specialize_uniform) {
        const std::string host = m.args[0].substr(0, m.args[0].find('.'));
        for (const sched::Stage& q : p.stages)
          if (q.compute.kind == sched::ComputeKind::at && q.compute.stage == host)
            named.insert(q.name);
      }
    }
    std::set<std::string> hosts;
    const size_t light_before = light->size();
    for (const auto& n : named) {
      if (copy_out(p, n, named))
        light->insert(n);
      else
        top_level_hosts(p, p.find(n), hosts);
    }
    if (hosts.empty() && light->size() == light_before) hosts.insert(g.target);  // new stages
    for (const auto& h : hosts) {
      if (g.locality_only && !touched.count(h)) locality->insert(h);
      if (!g.locality_only) locality->erase(h);
      touched.insert(h);
    }
  }
  return touched;
}

// Amdahl's law over the measured time per stage: a strategy expected to speed the stages it
// changes by `gain` speeds the kernel by 1 / ((1 - f) + f / gain), f their share of the time.
// 03's scores (78% of the time once its projections are register tiles) come before the
// vectors of its small elementwise stages. Unweighted when no stage it changes was timed.
// Stages in `locality` (moved, their work the same) expect `locality_gain` instead.
double weighed(double gain, double locality_gain, const std::set<std::string>& touched,
               const std::set<std::string>& light, const std::set<std::string>& locality,
               const std::map<std::string, double>& shares, double* share) {
  double f = 0, left = 1;
  bool timed = false;
  for (const auto& t : light) timed |= shares.count(t) > 0;  // a copy: ~none of its time
  for (const auto& t : touched) {
    auto it = shares.find(t);
    if (it == shares.end()) continue;
    timed = true;
    const double fi = std::clamp(it->second, 0.0, 1.0);
    f += fi;
    left -= fi - fi / std::max(locality.count(t) ? std::min(gain, locality_gain) : gain, 1e-9);
  }
  if (!timed) return gain;
  *share = std::clamp(f, 0.0, 1.0);
  return 1.0 / std::max(left, 1e-9);
}

std::string describe(const Evidence& e) {
  if (e.bound.empty()) return "not measured yet";
  if (e.bound == "compute")
    return fmt::format("compute-bound at {:.0f}% of the attainable {:.0f} GFLOP/s ({:.1f} GFLOP/s)",
                       100 * e.fraction, e.gflops * e.headroom, e.gflops);
  return fmt::format("memory-bound at {:.0f}% of the attainable bandwidth ({:.1f} of {:.1f} GB/s)",
                     100 * e.fraction, e.gbps, e.gbps * e.headroom);
}

// What the rules read: the pipeline's facts, the evidence, and the headroom that caps every
// expectation.
struct Rules {
  const PipelineFacts& f;
  const Evidence& e;
  double head = 1;
  bool compute = false, memory = false;
};

// Register tiles and their operand panels.
void propose_tiling(const Rules& r, std::vector<Proposal>& props) {
  const PipelineFacts& f = r.f;
  const double head = r.head;
  const bool memory = r.memory;
  if (f.tileable > f.register_blocked)
    props.push_back({"register_block_epilogue", std::min(head, 8.4),
                     "a GEMM-like reduction accumulates in memory and an elementwise chain "
                     "reads it back; a register tile of the output with the chain applied in "
                     "registers does both in one pass"});
  if (f.tileable > f.register_blocked)
    props.push_back({"register_block", std::min(head, 8.0),
                     "a GEMM-like reduction accumulates in memory; a register tile gives each "
                     "loaded vector several FMAs"});
  if (f.register_blocked > 0 && f.packed < f.register_blocked)
    props.push_back({"pack_operand", std::min(head, 1.5),
                     "the register tile streams a strided operand panel; packing makes it "
                     "contiguous and cache-resident"});
  if (f.packed_in_loop > 0 && !memory)
    props.push_back({"double_buffer_pack", std::min(head, 1.08),
                     fmt::format("{} operand panels are packed at the top of each column tile "
                                 "and the micro-kernel waits for them; filling the next one during "
                                 "this one's FMAs hides those reads (~4-10% of a GEMM whose "
                                 "weights stream from DRAM)",
                                 f.packed_in_loop)});
}

// Passes over memory, vector loops, loop order and threads.
void propose_passes(const Rules& r, std::vector<Proposal>& props) {
  const PipelineFacts& f = r.f;
  const Evidence& e = r.e;
  const double head = r.head;
  const bool compute = r.compute, memory = r.memory;
  if (f.pure_intermediates_at_root > 0)
    props.push_back({"inline_elementwise",
                     std::min(head, 1.0 + (memory ? 0.5 : 0.15) * f.pure_intermediates_at_root),
                     fmt::format("{} elementwise intermediates are written and read back",
                                 f.pure_intermediates_at_root)});
  if (f.read_in_part > 0)
    // Causal scores: the rows' reads cover about half of the square, all of it computed at root.
    props.push_back({"fuse_into_consumer", std::min(head, 3.0),
                     fmt::format("{} intermediates are computed whole but read only over ranges "
                                 "that move with their reader's row (causal or windowed): computed "
                                 "per row, only the part read is (about half of causal scores; "
                                 "01 vectorized: 527 -> 183 ms)",
                                 f.read_in_part)});
  else if (f.intermediates_at_root > f.pure_intermediates_at_root)
    props.push_back(
        {"fuse_into_consumer", std::min(head, memory ? 2.0 : 1.2),
         "row statistics are computed in separate passes; fusing keeps each row in L1"});
  if (f.row_reductions > 0)
    props.push_back({"rfactor_reduction", std::min(head, 4.0),
                     "row reductions run as one scalar dependence chain"});
  else if (f.heavy_inline_reductions > 0)
    // A dot product kept inside a select (15's q.k over d) or a sum of exponentials: the
    // reduction is the stage's work.
    props.push_back({"rfactor_reduction", std::min(head, 4.0),
                     fmt::format("{} reductions computed inside definitions (over a whole "
                                 "dimension, or of exp/division/sqrt terms) run as one scalar "
                                 "chain each",
                                 f.heavy_inline_reductions)});
  else if (f.inline_row_reductions > 0)
    // A row max or sum over a moving range (attention's softmax statistics) beside O(D) work
    // per element elsewhere: a small share of the time.
    props.push_back({"rfactor_reduction", std::min(head, 1.3),
                     fmt::format("{} row statistics over ranges that move with the row (a causal "
                                 "max or sum) run as one scalar chain each",
                                 f.inline_row_reductions)});
  if (f.strided_operands > 0)
    props.push_back({"change_layout", std::min(head, compute ? 3.0 : 2.0),
                     fmt::format("{} reductions would read an operand across its rows in vectors "
                                 "along their output (gathers); a transposed copy, made once per "
                                 "slice, makes every vector one load",
                                 f.strided_operands)});
  if (f.unvectorized > 0 || e.not_vectorized)
    props.push_back({"vectorize_inner", std::min(head, compute ? 8.0 : 3.0),
                     fmt::format("{} computed stages have no vector loop", f.unvectorized)});
  if (f.gemm_like > f.register_blocked)
    props.push_back({"reorder_unit_stride", std::min(head, 4.0),
                     "the reduction walks an operand across rows; i-k-j order is unit-stride"});
  if (e.threads > 1 && (f.parallel == 0 || e.cpus_busy < 0.75 * e.threads))
    props.push_back({"parallel_outer", std::min(head, static_cast<double>(e.threads)),
                     fmt::format("{:.1f} of {} CPUs busy", e.cpus_busy, e.threads)});
  if (e.threads > 1 && e.cpus_busy < 0.75 * e.threads && f.parallel > 0)
    props.push_back({"fuse_parallel_loops", std::min(head, 1.5),
                     "threads idle although stages are parallel: too few outer iterations"});
}

// Rewrites of the program's arithmetic: hoisting, approximations, phases, gathers.
void propose_rewrites(const Rules& r, std::vector<Proposal>& props) {
  const PipelineFacts& f = r.f;
  const double head = r.head;
  const bool compute = r.compute;
  if (f.hoistable > 0) {
    // The hoisted share of the work runs once instead of once per iteration of the loops it does
    // not read: about 1 / (1 - share) when those loops are long, capped at 16x. 16's decays are
    // over 99% of their stages' work (8192 repeats each): hoisted first, the 7.5 s naive kernel
    // runs in 2.3 s, and every later measurement costs a third as much.
    const double gain = 1.0 / std::max(1.0 / 16, 1.0 - f.hoist_saved);
    // Memory-bound, the saved arithmetic hides partly behind the loads: a quarter of the gain,
    // at most 1 + 7/4.
    const double memory_gain = 1.0 + (std::min(gain, 8.0) - 1) / 4;
    props.push_back({"hoist_invariants", std::min(head, compute ? gain : memory_gain),
                     fmt::format("{} stages evaluate a costly term (exp, a division, a nested "
                                 "reduction: ~{:.0f}% of their work per point) that does not "
                                 "change along some of their loops",
                                 f.hoistable, 100 * f.hoist_saved)});
  }
  if (f.recomputed_transcendentals > 0)
    props.push_back({"recompute_vs_store", std::min(head, compute ? 1.06 : 1.03),
                     fmt::format("{} inlined stages with exp/erf/tanh are evaluated again by each "
                                 "of their readers; computing each once per row and reading it "
                                 "back from L1 saves the repeated transcendentals",
                                 f.recomputed_transcendentals)});
  if (f.approximable > 0) {
    // Mish's tanh(softplus) as one exp and a division: 27's epilogue, 1.11x of the kernel
    // measured side by side. Elsewhere only the exponential's one FMA less per call.
    const bool mish = f.tanh_softplus > 0;
    props.push_back(
        {"fast_approximations",
         std::min(head, mish ? (compute ? 1.12 : 1.04) : (compute ? 1.02 : 1.01)),
         mish ? fmt::format("{} tanh(log(1 + exp(x))) compositions (Mish) cost an exp, a log and "
                            "a tanh each; the identity n / (n + 2), n = e (e + 2), needs one "
                            "exp and a division",
                            f.tanh_softplus)
              : fmt::format("{} stages evaluate exp/log/tanh/erf/sigmoid at full precision; "
                            "the task's tolerance leaves room for the fast forms",
                            f.approximable)});
  }
  if (f.phase_splittable > 0)
    // Only one tap in f.phases counts, and the rest pay a division, a modulo and a bounds test
    // besides the multiply by zero: 28's naive kernel went from 16.4 s to 0.31 s by phases
    // (8 phases, ~50x); the padded copies and the phase read-back cost a few passes over memory.
    props.push_back({"phase_decomposition", std::min(head, 2.0 * static_cast<double>(f.phases)),
                     fmt::format("{} strided transposed convolutions test every tap and keep one "
                                 "in {} (the rest multiply a zero after a division, a modulo and "
                                 "a bounds test); by phases only the taps that count run, as "
                                 "unit-stride convolutions over zero-padded copies",
                                 f.phase_splittable, f.phases)});
  if (f.paged_gathers > 0)
    // 06 with its scores vectorized: 1.09x median, 1.16x min side by side (a 64-bit division
    // and a page-table load per token, beside a 128-wide dot product).
    props.push_back({"gather_hoisting", std::min(head, 1.1),
                     fmt::format("{} stages read through a page table at t / size: every token "
                                 "divides and reads the table again; by pages, once per page",
                                 f.paged_gathers)});
}

// Layout and placement, the softmax rewrite, and the finishing touches.
void propose_layout(const Rules& r, const PlanInput& in, const sched::Pipeline& pipeline,
                    const Recipe& recipe, const sched::Pipeline* base,
                    std::vector<Proposal>& props) {
  const PipelineFacts& f = r.f;
  const Evidence& e = r.e;
  const double head = r.head;
  const bool compute = r.compute, memory = r.memory;
  if (f.misaligned_rows > 0)
    props.push_back({"aligned_loads", std::min(head, memory ? 1.03 : 1.01),
                     fmt::format("{} intermediates have rows that are not whole 64-byte lines: "
                                 "after the first row most vector loads and stores split two "
                                 "lines; padding the rows aligns them",
                                 f.misaligned_rows)});
  if (const size_t n = split_k_candidates(pipeline, e.threads).size(); n > 0)
    props.push_back({"split_k_parallel", std::min(head, 0.8 * e.threads),
                     fmt::format("{} reductions have fewer outputs than the {} threads and a "
                                 "long reduction: one slice of it per thread",
                                 n, e.threads)});
  if (const size_t n = first_touch_stages(pipeline, in.ctx).size(); n > 0)
    // Remote reads cost about twice local ones; with the pages spread over the nodes the
    // readers' threads read locally. Not measured here (one memory node).
    props.push_back({"numa_first_touch", std::min(head, memory ? 1.3 : 1.05),
                     fmt::format("{} intermediates are written by one thread and read by {}: on "
                                 "this machine's {} memory nodes their pages all sit on the "
                                 "writer's node",
                                 n, e.threads, in.ctx.machine->numa_nodes)});
  if (const size_t n = line_sharing_loops(pipeline, e.threads).size(); n > 0)
    props.push_back({"avoid_false_sharing", std::min(head, 1.01),
                     fmt::format("{} parallel loops hand out single elements of a contiguous "
                                 "dim: threads meet inside lines at their chunks' edges",
                                 n)});
  // Judged on the default pipeline: the implementer puts it ahead of the loop scheduling (a
  // row max already split by rfactor is no longer a plain max).
  const sched::Pipeline& rewrite_on = base ? *base : pipeline;
  if (!recipe.has("online_softmax")) {
    const std::vector<OnlineSoftmax> rows = online_softmax_candidates(rewrite_on);
    const bool used = std::any_of(rows.begin(), rows.end(),
                                  [](const OnlineSoftmax& c) { return c.probabilities_used; });
    // Where the probabilities are used (attention's P @ V, a softmax's output) each value's exp
    // runs twice, so only a memory-bound row gains (its max pass and the division go): 01's best
    // with vector row statistics, compute-bound, measured 0.95x with it. The log-sum-exp idiom
    // (cross entropy) saves a whole pass. A former 50 example, whose max and sum ran scalar,
    // gained 1.20x: the rewrite vectorizes the statistics too, which rfactor_reduction also does.
    if (!rows.empty())
      props.push_back(
          {"online_softmax", std::min(head, used ? (memory ? 1.15 : 1.02) : (memory ? 1.3 : 1.1)),
           used ? fmt::format("{} softmax rows are read three times (max, sum of exp, use) and "
                              "divided by their sum; a one-pass logsumexp (running max, rescaled "
                              "sum) reads them twice and the division goes, at one more exp "
                              "per value",
                              rows.size())
                : fmt::format("{} log-sum-exp rows are read twice (max, then sum of exp); a "
                              "one-pass logsumexp (running max, rescaled sum) reads them once",
                              rows.size())});
  }
  if (f.invertible_divisions > 0)
    props.push_back({"strength_reduce", std::min(head, compute ? 1.04 : 1.02),
                     fmt::format("{} stages divide by a value that does not change along their "
                                 "innermost loop (a row statistic or a constant); a reciprocal "
                                 "computed once turns each vector divide into a multiply",
                                 f.invertible_divisions)});
  if (f.register_blocked > 0)
    props.push_back(
        {"unroll_reduction", std::min(head, 1.1), "trim the micro-kernel's loop overhead"});
  if (f.vectorized > 0)
    props.push_back({"unroll_inner", std::min(head, compute ? 1.5 : 1.1),
                     "several independent vector chains hide FMA latency"});
  if (f.gemm_like > 0 && f.register_blocked == 0)
    props.push_back({"accumulate_locally", std::min(head, 1.3),
                     "the reduction read-modify-writes its output row in memory"});
  if (memory) props.push_back({"tile_2d", std::min(head, 1.2), "keep a 2-D block in cache"});
  if (memory)
    props.push_back({"streaming_stores", std::min(head, 1.3),
                     "the outputs are written once and never read back; streaming stores skip "
                     "the read-for-ownership of every output line"});
  if (memory)
    props.push_back({"prefetch_distance", std::min(head, 1.25),
                     "passes over L1-resident rows leave DRAM idle; prefetching the next rows "
                     "keeps it streaming"});
}

// A strategy's moves here with its default knobs, as text ("" when it has none or they fail).
std::string moves_text(const std::string& id, const sched::Pipeline& p, const MoveContext& ctx) {
  const Strategy* s = find_strategy(id);
  if (!s || !s->moves) return "";
  auto groups = s->moves(p, s->default_knobs(), ctx);
  if (!groups || groups->empty()) return "";
  std::string text;
  for (const MoveGroup& g : *groups)
    for (const sched::Primitive& m : g.moves) text += m.to_string() + "\n";
  return text;
}

// The proposals not tried yet that touch something here, weighed by the time in the stages
// they change, best first: the first is the plan.
Plan rank(const PlanInput& in, const sched::Pipeline& pipeline, std::vector<Proposal> props,
          Plan plan) {
  const Evidence& e = in.evidence;
  const bool memory = e.bound == "memory";
  std::stable_sort(props.begin(), props.end(),
                   [](const Proposal& a, const Proposal& b) { return a.expected > b.expected; });
  // A strategy whose moves here are those of one tried already, or of one ranked above it (two
  // entries that build the same tile), would only judge the same kernel again.
  std::set<std::string> moves_seen;
  for (const std::string& t : in.tried)
    if (std::string m = moves_text(t, pipeline, in.ctx); !m.empty()) moves_seen.insert(m);
  std::vector<Proposal> ok;
  for (Proposal p : props) {
    if (in.tried.count(p.strategy) || !in.filter.allows(p.strategy)) continue;
    if (std::string m = moves_text(p.strategy, pipeline, in.ctx);
        !m.empty() && !moves_seen.insert(m).second)
      continue;
    if (const Strategy* st = find_strategy(p.strategy); st && st->rewrite_first) {
      // Unweighted: the rewrite changes the stages' definitions, not one stage's loops.
      ok.push_back(p);
      continue;
    }
    std::set<std::string> light, locality;
    std::set<std::string> touched = touched_stages(p.strategy, pipeline, in.ctx, &light, &locality);
    if (touched.empty() && light.empty()) continue;
    for (const auto& l : light) touched.erase(l);
    double share = -1;
    // Moved whole, a stage gains what locality gives: little compute-bound, more memory-bound.
    const double locality_gain = memory ? 2.0 : 1.2;
    const double overall =
        weighed(p.expected, locality_gain, touched, light, locality, e.stage_shares, &share);
    if (share >= 0) {
      p.why += fmt::format(
          "; {:.0f}% of the time is in the stages it changes ({}), so ~{:.1f}x "
          "there is ~{:.2f}x overall",
          100 * share, fmt::join(touched, ", "), p.expected, overall);
      if (!light.empty())
        p.why += fmt::format(" ({} only in the copy-out loops, not their accumulators)",
                             fmt::join(light, ", "));
      if (!locality.empty())
        p.why += fmt::format(" ({} moved whole, for locality only: ~{:.1f}x)",
                             fmt::join(locality, ", "), std::min(p.expected, locality_gain));
      p.expected = overall;
    }
    ok.push_back(p);
  }
  std::stable_sort(ok.begin(), ok.end(),
                   [](const Proposal& a, const Proposal& b) { return a.expected > b.expected; });
  if (ok.empty()) {
    plan.strategy = "stop";
    plan.why = "every strategy the rules suggest was tried from this best or does not apply";
    if (!in.filter.empty()) plan.why += " (or is left out by --only/--skip)";
    return plan;
  }
  const Strategy* s = find_strategy(ok[0].strategy);
  plan.strategy = ok[0].strategy;
  plan.knobs = s->default_knobs();
  plan.expected_speedup = ok[0].expected;
  plan.why = fmt::format("{}: {} (expect ~{:.1f}x)", s->name, ok[0].why, ok[0].expected);
  for (size_t i = 1; i < ok.size() && i < 4; ++i)
    plan.alternatives.push_back(fmt::format("{} (~{:.1f}x)", ok[i].strategy, ok[i].expected));
  return plan;
}

}  // namespace

Plan plan_over(const PlanInput& in, const sched::Pipeline& pipeline, const Recipe& recipe,
               const sched::Pipeline* base) {
  const Evidence& e = in.evidence;
  const PipelineFacts f = pipeline_facts(pipeline);
  const double head = std::max(1.0, e.headroom);
  Plan plan;
  plan.bottleneck = describe(e);
  plan.analysis = fmt::format(
      "{} stages: {} GEMM-like, {} register-blocked, {} packed, {} pure intermediates and {} "
      "other intermediates at root ({} read only in part), {} row reductions, {} of {} computed "
      "stages vectorized, {} parallel; {} thread(s), {:.1f} CPUs busy.",
      f.stages, f.gemm_like, f.register_blocked, f.packed, f.pure_intermediates_at_root,
      f.intermediates_at_root - f.pure_intermediates_at_root, f.read_in_part, f.row_reductions,
      f.vectorized, f.vectorized + f.unvectorized, f.parallel, e.threads, e.cpus_busy);
  for (const auto& s : e.findings) plan.analysis += " " + s;
  if (!e.bound.empty() && e.fraction > 1.0)
    plan.analysis += fmt::format(
        " The best reads {:.0f}% of the roofline: the machine's figures are too low (`kforge "
        "doctor --refresh` measures them again), so its distance to the roof is unknown and the "
        "roofline is no reason to stop.",
        100 * e.fraction);

  if (at_roofline(e, in.stop_fraction)) {
    plan.strategy = "stop";
    plan.why =
        fmt::format("the best is at {:.0f}% of the roofline (stop at {:.0f}%): little left to gain",
                    100 * e.fraction, 100 * in.stop_fraction);
    return plan;
  }

  const Rules rules{
      .f = f, .e = e, .head = head, .compute = e.bound == "compute", .memory = e.bound == "memory"};
  std::vector<Proposal> props;
  propose_tiling(rules, props);
  propose_passes(rules, props);
  propose_rewrites(rules, props);
  propose_layout(rules, in, pipeline, recipe, base, props);
  // The strategies that are units of their own bring their rules with them.
  for (const Strategy& st : strategy_catalog())
    if (st.propose)
      if (auto prop =
              st.propose({.pipeline = pipeline, .evidence = e, .ctx = in.ctx, .headroom = head}))
        props.push_back(std::move(*prop));
  return rank(in, pipeline, std::move(props), std::move(plan));
}

Plan BuiltinPlanner::plan(const PlanInput& in) {
  Plan stop;
  stop.strategy = "stop";
  if (!in.task || !in.task->base) {
    stop.why = "the built-in planner plans over a TE spec's pipeline; the task has none";
    return stop;
  }
  // A candidate the built-in brain did not generate is planned for as the default schedule: its
  // strategies are proposed from the program's structure.
  const Recipe& recipe = recipe_of(in.best);
  auto pipeline = pipeline_of(*in.task->base, recipe, in.ctx);
  if (!pipeline) {
    stop.why = "replaying the best recipe failed (a kforge bug): " + pipeline.error().message();
    return stop;
  }
  return plan_over(in, *pipeline, recipe, &*in.task->base);
}

}  // namespace kf::agents::builtin
