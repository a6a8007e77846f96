// Helpers shared by the files that implement the mechanical forms (moves.cpp, moves_tiles.cpp,
// moves_rewrite.cpp, moves_cpu.cpp) and the pipeline analysis they read (moves_analysis.cpp);
// not for the rest of the brain.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/strategy.h"
#include "te/ast.h"

namespace kf::agents::builtin {

// The knob's value, or `fallback` when the knobs do not name it.
int64_t knob(const Knobs& k, const std::string& name, int64_t fallback);
// Builds a primitive from its text; the texts of the forms are well-formed by construction
// (a malformed one is a kforge bug and stops loudly).
sched::Primitive prim(const std::string& text);

// One group per stage (indices into p.stages), each the one primitive `VERB STAGE`.
std::vector<MoveGroup> per_stage(const sched::Pipeline& p, const std::vector<int>& stages,
                                 const std::string& verb);

bool computed(const sched::Stage& s);  // not inlined
bool has_kind(const sched::Stage& s, sched::LoopKind k);
bool pure(const sched::Loop& l);  // neither a reduction nor a scan loop
std::string ref(const sched::Stage& s, const std::string& loop);  // "S.loop"
// A loop name not used in stage s: base, base2, base3...
std::string fresh_loop(const sched::Stage& s, const std::string& base);
// A stage name not used by a stage, tensor or dim of the pipeline's task.
std::string fresh_stage(const sched::Pipeline& p, const std::string& base);
// The pure loops of a stage, in nest order (names).
std::vector<std::string> pure_loops(const sched::Stage& s);
// The extent `hi` at the task's bench shape (1 when it cannot be evaluated, or no shape).
int64_t bench_extent(const Bindings* bench, const te::Expr& hi);
// A task's bench shape; env is null when it does not instantiate.
struct BenchShape {
  Expected<ShapeInstance> shape;
  const Bindings* env = nullptr;
  explicit BenchShape(const Task& t) : shape(t.instantiate(t.bench)) {
    if (shape) env = &shape->env;
  }
};

// ---- Pipeline analysis (moves_analysis.cpp) ----------------------------------------------

// Accesses to inputs in an expression, with each index's plain variable name ("" if complex).
struct AccessInfo {
  std::string tensor;
  te::RefKind kind = te::RefKind::input;
  std::vector<std::string> index_vars;  // each index's plain variable, "" if not a plain var
  // The variable the last index moves with at unit stride: a plain `v`, or `v + e`, `e + v`,
  // `v - e` with e free of v (a stencil's x[i + a, j + b] moves with j and with b); "" else.
  std::vector<std::string> last_unit;
  std::set<std::string> uses;  // every variable any index reads
  // Variables every index reads only as `v / K`, K a constant of at least 16 (16's
  // hs[b, h, t / 64, n, p]): consecutive v read the same element K times running.
  std::set<std::string> blocked;
  bool reads(const std::string& v) const { return uses.count(v) > 0; }
};

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

bool is_cache_stage(const sched::Stage& s);  // a cache_read/cache_write stage
bool transposing_pack(const sched::Stage& s);
// The stage accumulating into s (its cache_write), -1 when none.
int accumulator_of(const sched::Pipeline& p, const sched::Stage& s);
std::vector<AccessInfo> accesses(const te::Expr& body);
bool gemm_like(const sched::Stage& s);
std::string tile_col_var(const sched::Stage& s);
std::optional<int64_t> coefficient(const te::Expr& e, const std::string& j);
std::string tile_row_var(const sched::Stage& s, const std::string& j);
bool register_tileable(const sched::Stage& s);
bool register_tile(const sched::Stage& s);
bool row_reduction(const sched::Stage& s);
bool inline_row_reduction(const sched::Stage& s, int* cost);
bool inline_row_reduction(const sched::Stage& s);
std::optional<AccessInfo> transposable_input(const sched::Stage& s);
std::optional<LayoutChange> layout_change(const sched::Pipeline& p, const sched::Stage& s);
bool left_to_change_layout(const sched::Pipeline& p, const sched::Stage& s);
bool rereads(const sched::Stage& c, const te::Expr& e, const std::string& name,
             std::vector<std::set<std::string>> order);
bool read_in_moving_range(const sched::Stage& c, const te::Expr& e, const std::string& name,
                          std::set<std::string> movers);
bool inlining_recomputes(const sched::Pipeline& p, const sched::Stage& s);

// ---- Shared by the generators --------------------------------------------------------------

// Whether register_block (or its epilogue form) tiles stage s (moves.cpp).
bool register_block_target(const sched::Pipeline& p, const sched::Stage& s);
// The loop a packed panel s could be double-buffered across, "" when none (moves_tiles.cpp).
std::string double_buffer_carrier(const sched::Pipeline& p, const sched::Stage& s);

}  // namespace kf::agents::builtin
