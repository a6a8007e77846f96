// Shared helpers of the primitive implementations (internal to src/schedule).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "schedule/pipeline.h"
#include "schedule/trace.h"
#include "support/status.h"

namespace kf::sched::detail {

// The stage named `name` ("no stage named X; stages: a, b"); refuses an inlined one when
// `need_loops` ("X is inlined: it has no loops").
Expected<int> find_stage(const Pipeline& p, const std::string& name, bool need_loops);
// The stage and loop index of "STAGE.LOOP" or of (stage, loop).
Expected<std::pair<int, int>> find_loop(const Pipeline& p, const std::string& ref);
Expected<int> find_loop_in(const Pipeline& p, int stage, const std::string& loop);

// Every name the stage's split tree has used (original vars, split and fuse products).
std::set<std::string> tree_names(const Stage& s);
// Fails unless `name` is a valid loop name unused in the stage's tree.
Status check_new_loop_name(const Stage& s, const std::string& name);
// The leaves (current loops) derived from a node of the split tree.
std::set<std::string> leaves_of(const Stage& s, const std::string& node);
// Whether a node of the split tree is (derived from) the inner part of a split, so its extent
// may depend on another loop of the same stage (a tail).
bool has_tail_ancestry(const Stage& s, const std::string& node);
// Whether stage q is computed inside loop `loop` of stage s (directly or through other stages
// computed there); q == s counts as inside.
bool computed_inside(const Pipeline& p, int q, int s, int loop);
// Why a loop cannot carry vector lanes or threads ("" if it can).
std::string dependence_of(const Stage& s, const Loop& l);
std::string join(const std::vector<std::string>& v, const std::string& sep = ", ");
std::string loop_list(const Stage& s);

// Primitive bodies (args already checked for shape by the parser).
Status apply_split(Pipeline& p, const std::string& ref, const std::string& outer,
                   const std::string& inner, int64_t factor);
Status apply_tile(Pipeline& p, const Primitive& prim);
Status apply_reorder(Pipeline& p, const Primitive& prim);
Status apply_fuse(Pipeline& p, const Primitive& prim);
Status apply_vectorize(Pipeline& p, const Primitive& prim);
Status apply_unroll(Pipeline& p, const Primitive& prim);
Status apply_parallel(Pipeline& p, const Primitive& prim);
Status apply_compute_at(Pipeline& p, const Primitive& prim);
Status apply_compute_inline(Pipeline& p, const Primitive& prim);
Status apply_compute_root(Pipeline& p, const Primitive& prim);
Status apply_cache_read(Pipeline& p, const Primitive& prim);
Status apply_cache_write(Pipeline& p, const Primitive& prim);
Status apply_rfactor(Pipeline& p, const Primitive& prim);
Status apply_reorder_storage(Pipeline& p, const Primitive& prim);
Status apply_nontemporal(Pipeline& p, const Primitive& prim);
Status apply_align_storage(Pipeline& p, const Primitive& prim);
Status apply_hoist_gathers(Pipeline& p, const Primitive& prim);
Status apply_vectorize_reductions(Pipeline& p, const Primitive& prim);
Status apply_prefetch(Pipeline& p, const Primitive& prim);
Status apply_double_buffer(Pipeline& p, const Primitive& prim);
Status apply_reciprocal(Pipeline& p, const Primitive& prim);          // reciprocal.cpp
Status apply_hoist(Pipeline& p, const Primitive& prim);               // hoist.cpp
Status apply_mask_range(Pipeline& p, const Primitive& prim);          // mask_range.cpp
Status apply_specialize_uniform(Pipeline& p, const Primitive& prim);  // loop_primitives.cpp
Status apply_approximate(Pipeline& p, const Primitive& prim);         // approximate.cpp
Status apply_phase_split(Pipeline& p, const Primitive& prim);         // phase_split.cpp
Status apply_online_softmax(Pipeline& p, const Primitive& prim);      // online_softmax.cpp

// 0, 1, ..., n - 1: a stage's storage order when it is stored as declared.
std::vector<int> identity(size_t n);
// The extents of an input (its shape's formulas) or of a stage (its vars' ranges).
std::vector<te::Expr> tensor_extents(const Pipeline& p, te::Ref ref);

// A name for a new stage: fails if taken by a stage or a tensor of the task.
Status check_new_stage_name(const Pipeline& p, const std::string& name);

}  // namespace kf::sched::detail
