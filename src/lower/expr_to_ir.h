// Turns a stage's TE expression into an IR expression in the kernel's precision: floating
// values compute in f32 (f32 and bf16 tasks) or f64 (f64 tasks), integers in i64; tensors are
// loaded in their storage type (bf16 widened to f32, i32 to i64).
//
//   ExprLowerer::Bindings b;
//   b.index_var = [&](int d) { return value_of_lhs_var(d); };     // e.g. C.i.o*6 + C.i.i
//   b.reduce_var = [&](int r) { return value_of_rvar(r); };
//   b.stage_view = [&](int s) { return views.at(s); };            // where stage s lives now
//   ExprLowerer lo(pipeline, b, names);
//   ir::Expr v = lo.lower(stage.body.args[0]);                    // A[i*K + k] * B[k*N + j]
//   ir::Stmt st = with_preludes(lo.take_preludes(), store_of(v)); // inline reductions, if any
//
// Semantics kept from TE (docs/te.md): `T[...] else V` is a bounds check on T's logical extent,
// its load predicated so it never touches memory out of range; select is lazy (loads in a
// branch are predicated on the branch's condition, so a vector select stays safe); integer / and
// % truncate; casts round (f32(x), bf16(x)) or truncate (i32(x)). A reduction nested in an
// expression (one that could not become a stage) becomes a prelude: a one-element accumulator
// and a loop over its range, run before the expression is used.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "schedule/pipeline.h"

namespace kf::lowering {

struct ReduceState;  // expr_to_ir.cpp: an inline reduction's running state

// Unique names within one lowered function.
class NameGen {
 public:
  std::string fresh(const std::string& base) { return base + std::to_string(next_[base]++); }

 private:
  std::map<std::string, int> next_;
};

// Where a stage's values live while its consumers run: element (d0, d1, ...) is at
// name[sum((d_k - mins[k]) * strides[k])].
struct BufferView {
  std::string name;
  ir::Type storage = ir::Type::f32();
  std::vector<ir::Expr> mins, strides;
  ir::Expr offset;           // added to every index when defined (one half of a double buffer)
  std::string value_buffer;  // argmax/argmin stages: the buffer of best values ("" otherwise)
};

// The IR types of a task: floating compute type and the storage type of a stage.
ir::Type compute_type(const Task& task);
ir::Type value_type(const Task& task, te::ValueType t);  // f64 -> compute, i64 -> i64

// The reduction's identity and combining step (in the compute type).
ir::Expr reduce_identity(te::ReduceOp op, ir::Type t);
ir::Expr reduce_combine(te::ReduceOp op, const ir::Expr& acc, const ir::Expr& value);

// An inline reduction's accumulators and the loop that fills them.
struct Prelude {
  struct Buffer {
    std::string name;
    ir::Type type;
    int64_t extent = 1;  // elements, on the stack
  };
  std::vector<Buffer> buffers;
  ir::Stmt compute;
};
// Wraps `use` so that the preludes run before it (in order), their buffers live around it.
ir::Stmt with_preludes(const std::vector<Prelude>& pre, ir::Stmt use);

class ExprLowerer {
 public:
  struct Bindings {
    std::function<ir::Expr(int)> index_var;            // LHS var d of the stage
    std::function<ir::Expr(int)> reduce_var;           // a loop reduction var of the stage
    std::function<const BufferView&(int)> stage_view;  // where stage s is readable now
    int natural_lanes = 16;  // vectorize_reductions without a width: the target's vector
  };

  ExprLowerer(const sched::Pipeline& p, int stage, Bindings b, NameGen& names);

  // `e` belongs to the stage given at construction.
  ir::Expr lower(const te::Expr& e);
  // Converts a value to type `t` (numeric conversion; booleans become 0/1).
  static ir::Expr convert(const ir::Expr& v, ir::Type t);
  // Statements that must run before the lowered expressions are used (inline reductions).
  std::vector<Prelude> take_preludes();
  // The logical extent of dimension d of input k or stage s, as an IR expression.
  ir::Expr input_extent(int input, int d);
  ir::Expr stage_extent(int stage, int d);
  // A static TE expression (dims, derived sizes, scalars, literals) as IR.
  ir::Expr lower_static(const te::Expr& e);

 private:
  ir::Expr access(const te::Expr& e);
  ir::Expr call(const te::Expr& e);
  ir::Expr inline_reduce(const te::Expr& e);
  // The loop of an inline reduction over one variable as `lanes` vector partial results
  // (vectorize_reductions): `value` (which reads the reduction variable `var`, after the
  // preludes `inner`) is combined into its lane; the lanes are folded into `state` at the end.
  ir::Stmt vector_reduce_loop(const te::Expr& e, const std::string& var,
                              const std::vector<Prelude>& inner, const ir::Expr& value,
                              const ReduceState& state, int lanes, Prelude& pre);
  ir::Expr load(ir::Type t, const std::string& buffer, const ir::Expr& index, ir::Expr pred);

  const sched::Pipeline& p_;
  const Task& task_;
  int stage_;
  Bindings b_;
  NameGen& names_;
  ir::Type ctype_;
  std::map<int, ir::Expr> inline_rvars_;
  std::vector<ir::Expr> guards_;  // conditions of enclosing select branches
  std::vector<Prelude> preludes_;
};

}  // namespace kf::lowering
