// direct_conv_blocking, a strategy as a unit: its catalog entry, its mechanical form and the
// built-in planner's rule for it, in this one file (listed once in agents/strategy_catalog.cpp).
//
// A convolution is register-blocked directly over its output: a tile of output channels x
// output columns accumulates in registers while the input rows stream past, each input vector
// feeding every channel of the tile. No im2col buffer is written. The moves are
// register_block_epilogue's restricted to the stages that read an input through a sliding window
// (an index that adds an output variable and a reduction variable: in[n, c, oh + r, ow + s]),
// with a wider tile by default (8 channels x 32 columns: a convolution's output rows are long):
// a distinct candidate from that strategy's, ranked after the GEMM tiles.
#include <fmt/format.h>

#include <algorithm>

#include "agents/builtin/moves.h"
#include "agents/builtin/moves_internal.h"
#include "agents/roles.h"

namespace kf::agents::builtin {
namespace {

// Whether `e` names one of its stage's output variables and one of its reduction variables.
void names_in(const te::Expr& e, bool& pure, bool& reduce) {
  if (e.kind == te::ExprKind::name) {
    pure |= e.ref.kind == te::RefKind::index_var;
    reduce |= e.ref.kind == te::RefKind::reduce_var;
  }
  for (const te::Expr& a : e.args) names_in(a, pure, reduce);
}

// An access in `e` with an index that slides: an output variable plus a reduction variable.
bool window_read(const te::Expr& e) {
  if (e.kind == te::ExprKind::access)
    for (size_t d = 0; d < e.index_count(); ++d) {
      bool pure = false, reduce = false;
      names_in(e.args[d], pure, reduce);
      if (pure && reduce) return true;
    }
  return std::any_of(e.args.begin(), e.args.end(), window_read);
}

bool convolution(const sched::Stage& s) {
  return s.reduction && window_read(s.body);
}

Expected<std::vector<MoveGroup>> moves(const sched::Pipeline& p, const Knobs& k,
                                       const MoveContext& ctx) {
  auto groups = moves_register_block_epilogue(p, k, ctx);
  if (!groups) return groups;
  std::vector<MoveGroup> out;
  for (MoveGroup& g : *groups)
    if (const int i = p.find(g.target); i >= 0 && convolution(p.stages[static_cast<size_t>(i)]))
      out.push_back(std::move(g));
  return out;
}

// Compute-bound (or not measured yet) with a convolution the register tile has not taken. It
// expects a little less than the GEMM tiles (register_block_epilogue 8.4x, register_block 8.0x),
// which the planner proposes for the same stage: it is their alternative, not their rival.
std::optional<Proposal> propose(const ProposeInput& in) {
  if (in.evidence.bound == "memory") return std::nullopt;
  int n = 0;
  for (const sched::Stage& s : in.pipeline.stages)
    n += convolution(s) && register_block_target(in.pipeline, s);
  if (n == 0) return std::nullopt;
  return Proposal{.strategy = "direct_conv_blocking",
                  .expected = std::min(in.headroom, 7.5),
                  .why = fmt::format("{} convolutions accumulate in memory; a wide register tile "
                                     "of output channels x output columns reuses each input "
                                     "vector for every channel of the tile, with no im2col buffer",
                                     n)};
}

}  // namespace

Strategy direct_conv_blocking() {
  const Knob lanes{"lanes", 16, {8, 16}, "vector lanes (16 = one AVX-512 register of f32)"};
  Strategy s;
  s.id = "direct_conv_blocking";
  s.name = "Blocked direct convolution";
  s.scope = StrategyScope::generic;
  s.description =
      "Register-block output channels x output columns and stream input rows: no im2col "
      "buffer, each input vector reused by every channel of the block; the elementwise chain "
      "after the convolution is applied in registers.";
  s.evidence =
      "A compute-bound convolution far below peak; small kernel windows (3x3) where "
      "im2col's extra traffic dominates.";
  s.knobs = {{"mr", 8, {4, 6, 8, 12}, "output channels of the register tile"},
             {"nr", 32, {16, 32, 48, 64}, "output columns of the tile (a multiple of lanes)"},
             lanes};
  s.moves = moves;
  s.propose = propose;
  return s;
}

}  // namespace kf::agents::builtin
