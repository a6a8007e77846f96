// Helpers shared by the files that implement the mechanical forms (moves.cpp,
// moves_rewrite.cpp, moves_cpu.cpp); not for the rest of the brain.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "agents/strategy.h"

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

}  // namespace kf::agents::builtin
