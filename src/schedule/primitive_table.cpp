#include "schedule/primitive_table.h"

#include "schedule/primitives_internal.h"

namespace kf::sched {
namespace {

Status apply_split_primitive(Pipeline& p, const Primitive& prim) {
  return detail::apply_split(p, prim.args[0], prim.args[1], prim.args[2], std::stoll(prim.args[3]));
}

}  // namespace

const std::vector<PrimitiveInfo>& primitive_table() {
  using K = PrimitiveKind;
  using namespace detail;
  constexpr PrimitiveArg N = PrimitiveArg::name, L = PrimitiveArg::loop_ref,
                         I = PrimitiveArg::integer;
  // kind, word, operands, argument forms, optional trailing, variadic, apply, random weight
  static const std::vector<PrimitiveInfo> table = {
      {K::split,
       "split",
       "STAGE.LOOP OUTER INNER FACTOR",
       {L, N, N, I},
       0,
       false,
       apply_split_primitive,
       20},
      {K::tile, "tile", "STAGE X Y FX FY", {N, N, N, I, I}, 0, false, apply_tile, 5},
      {K::reorder, "reorder", "STAGE LOOP LOOP...", {N, N, N}, 0, true, apply_reorder, 12},
      {K::fuse, "fuse", "STAGE OUTER INNER FUSED", {N, N, N, N}, 0, false, apply_fuse, 4},
      {K::vectorize, "vectorize", "STAGE.LOOP [LANES]", {L, I}, 1, false, apply_vectorize, 14},
      {K::unroll, "unroll", "STAGE.LOOP", {L}, 0, false, apply_unroll, 8},
      {K::parallel, "parallel", "STAGE.LOOP", {L}, 0, false, apply_parallel, 8},
      {K::compute_at, "compute_at", "STAGE TARGET.LOOP", {N, L}, 0, false, apply_compute_at, 14},
      {K::compute_inline, "compute_inline", "STAGE", {N}, 0, false, apply_compute_inline, 6},
      {K::compute_root, "compute_root", "STAGE", {N}, 0, false, apply_compute_root, 2},
      {K::cache_read,
       "cache_read",
       "TENSOR CONSUMER NEW",
       {N, N, N},
       0,
       false,
       apply_cache_read,
       4},
      {K::cache_write, "cache_write", "STAGE NEW", {N, N}, 0, false, apply_cache_write, 5},
      {K::rfactor, "rfactor", "STAGE.LOOP NEW", {L, N}, 0, false, apply_rfactor, 5},
      {K::reorder_storage,
       "reorder_storage",
       "STAGE DIM DIM...",
       {N, N, N},
       0,
       true,
       apply_reorder_storage,
       2},
      {K::nontemporal, "nontemporal", "STAGE", {N}, 0, false, apply_nontemporal, 3},
      {K::prefetch, "prefetch", "STAGE.LOOP DISTANCE", {L, I}, 0, false, apply_prefetch, 3},
      {K::double_buffer,
       "double_buffer",
       "STAGE CONSUMER.LOOP [EVERY]",
       {N, L, I},
       1,
       false,
       apply_double_buffer,
       4},
      {K::reciprocal, "reciprocal", "STAGE", {N}, 0, false, apply_reciprocal, 2},
      {K::hoist, "hoist", "STAGE NEW VAR VAR...", {N, N, N}, 0, true, apply_hoist, 2},
      {K::vectorize_reductions,
       "vectorize_reductions",
       "STAGE [LANES]",
       {N, I},
       1,
       false,
       apply_vectorize_reductions,
       3},
      {K::approximate, "approximate", "STAGE", {N}, 0, false, apply_approximate, 2},
      {K::align_storage,
       "align_storage",
       "STAGE [ELEMENTS]",
       {N, I},
       1,
       false,
       apply_align_storage,
       2},
      {K::hoist_gathers, "hoist_gathers", "STAGE", {N}, 0, false, apply_hoist_gathers, 2},
      {K::phase_split, "phase_split", "STAGE NEW", {N, N}, 0, false, apply_phase_split, 2},
      {K::online_softmax, "online_softmax", "MAX_STAGE", {N}, 0, false, apply_online_softmax, 2},
      {K::mask_range, "mask_range", "STAGE [NEW]", {N, N}, 1, false, apply_mask_range, 2},
      {K::specialize_uniform,
       "specialize_uniform",
       "STAGE.LOOP",
       {L},
       0,
       false,
       apply_specialize_uniform,
       2},
  };
  return table;
}

const PrimitiveInfo& primitive_info(PrimitiveKind kind) {
  const auto& table = primitive_table();
  const size_t i = static_cast<size_t>(kind);
  KF_CHECK(i < table.size() && table[i].kind == kind)
      << "primitive_table() is not in PrimitiveKind order at " << i;
  return table[i];
}

}  // namespace kf::sched
