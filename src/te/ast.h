// The tensor-expression (TE) language's data structures: the parsed syntax tree (`Ast`) and the
// checked, fully resolved program (`Program`) that the interpreter runs and lowering consumes.
// docs/te.md is the language reference.
//
// Both levels share one expression node, `Expr`. The parser fills the syntactic fields (kind,
// loc, op, name, args, decls, has_else); `check()` (sema.h) fills `type` and `ref` on every node,
// replaces reduction `decls` by `rvars`, and turns the `Ast` into a `Program`:
//
//   spec:                                   to_string(program):
//     m[n]    = max(d: X[n, d])               m[n in 0..N] : float
//                                               = max(d in 0..D: X[n, d])
//     e[n, d] = exp(X[n, d] - m[n])           e[n in 0..N, d in 0..D] : float
//                                               = exp((X[n, d] - m[n]))
//     Y[n, d] = e[n, d] / sum(d2: e[n, d2])   Y[n in 0..N, d in 0..D] : float -> output 0
//                                               = (e[n, d] / sum(d2 in 0..D: e[n, d2]))
//
//   Expected<Program> p = compile_spec(task);         // compile.h
//   for (const Stage& s : p->stages)                  // in evaluation order
//     for (const IndexVar& v : s.vars) emit_loop(v.name, v.lo, v.hi);   // LHS loops
//   visit(p->stages[0].body, [](const Expr& e) { ... });                 // pre-order walk
//
// Resolution (`Expr::ref`, on kind name and access):
//   index_var  — ref.index into Stage::vars (the LHS index variables of the enclosing stage)
//   reduce_var — ref.index into Stage::reduce_vars (bound by an enclosing reduction node)
//   dim / derived / scalar — ref.index into task.dims / task.derived / task.scalars
//   input      — an access to task.inputs[ref.index]
//   stage      — an access to the tensor defined by Program::stages[ref.index] (an output or an
//                intermediate; a recurrence reads its own stage)
// Ranges: every IndexVar has integer expressions lo (inclusive) and hi (exclusive). LHS vars of a
// stage always have lo = literal 0. Inferred ranges are the parsed shape formula of the tensor
// dimension the variable indexes (names resolved to dims/derived/scalars). Explicit reduction
// ranges (`k in LO..HI`) may read outer index variables and tensors (`is_static` false then).
//
// Access semantics: `T[i, j] else V` reads V whenever an index is outside T's extent; without
// `else`, an out-of-range index is an error at run time (the interpreter reports it). `select`
// evaluates only the chosen branch. Integer `/` and `%` truncate toward zero (as in C).
#pragma once

#include <string>
#include <vector>

#include "task/dtype.h"

namespace kf::te {

// A position in task.toml: absolute line (task.te_line + line within the spec - 1), 1-based col.
struct SourceLoc {
  int line = 0;
  int col = 0;
};

// The value type of an expression. Tensors of floating dtype and floating scalars are f64 in the
// oracle; integer tensors, dims, index variables and integer literals are i64; comparisons and
// logic give boolean (usable only by select, &&, ||, ! and integer/float casts).
enum class ValueType { unknown, f64, i64, boolean };

enum class ExprKind {
  number,  // literal: `2` (i64), `0.5`, `1e-6`, `inf` (f64); value in Expr::number
  name,    // a bare name: index variable, reduction variable, dim, derived size or scalar
  access,  // T[idx, ...] (else V)?   args = indices; when has_else, the last arg is V
  call,    // an operator or function: Expr::op, operands in args
  reduce,  // sum/prod/max/min/argmax/argmin(vars: body): Expr::reduce_op, args = {body}
};

// Operators and functions (the `call` kind). Arity in parentheses.
enum class Op {
  neg,
  logical_not,  // -a, !a (1)
  add,
  sub,
  mul,
  div,
  mod,  // a + b ... a % b (2)
  lt,
  le,
  gt,
  ge,
  eq,
  ne,  // comparisons (2) -> boolean
  logical_and,
  logical_or,  // && || (2) on booleans -> boolean
  exp,
  log,
  sqrt,
  rsqrt,
  tanh,
  erf,
  sigmoid,  // float functions (1)
  abs,
  floor,
  ceil,  // (1); floor/ceil of an integer is itself
  min,
  max,
  pow,
  ceildiv,  // (2); ceildiv on integers only
  select,   // select(cond, a, b) (3)
  cast,     // f32(x) f64(x) bf16(x) i32(x) i64(x) (1)
};

// logsumexp(VARS: x) = log(sum(exp(x))), evaluated without overflow (max + log of the sum of
// exp(x - max)); generated code computes it in one pass with online rescaling.
enum class ReduceOp { sum, prod, max, min, argmax, argmin, logsumexp };

enum class RefKind { none, index_var, reduce_var, dim, derived, scalar, input, stage };

struct Ref {
  RefKind kind = RefKind::none;
  int index = -1;
};

struct Expr;

// A variable as written in a reduction or on a left-hand side: `k` or `k in LO..HI`.
struct VarDecl {
  std::string name;
  SourceLoc loc;
  std::vector<Expr> bounds;  // empty, or {lo, hi}
};

struct Expr {
  ExprKind kind = ExprKind::number;
  SourceLoc loc;
  ValueType type = ValueType::unknown;  // set by check() (by the parser for numbers)

  double number = 0;           // number
  std::string name;            // name, access (the tensor), call (the spelling, e.g. "exp", "+")
  Ref ref;                     // name, access: what the name resolves to (set by check())
  Op op = Op::add;             // call
  DType cast_to = DType::f64;  // call with op == cast
  ReduceOp reduce_op = ReduceOp::sum;  // reduce
  bool has_else = false;               // access: the last arg is the out-of-range value
  bool approx = false;     // call exp/log/tanh/erf/sigmoid: fast f32 form (primitive `approximate`)
  std::vector<Expr> args;  // operands / indices (+ else value) / {reduction body}
  std::vector<VarDecl> decls;  // reduce, Ast only: the variables as written
  std::vector<int> rvars;      // reduce, Program only: indices into Stage::reduce_vars

  // Number of index expressions of an access (args minus the else value).
  size_t index_count() const { return args.size() - (has_else ? 1 : 0); }
};

// One statement as parsed: `target[lhs...] = body`.
struct Statement {
  std::string target;
  SourceLoc loc;             // of the target name
  std::vector<VarDecl> lhs;  // LHS index variables (bounds only as `v in 0..HI`)
  Expr body;
};

struct Ast {
  std::string file;
  SourceLoc start;  // where the spec text begins (Task::te_line, column 1)
  std::vector<Statement> statements;
};

// An index variable with its resolved range [lo, hi).
struct IndexVar {
  std::string name;
  SourceLoc loc;
  Expr lo, hi;            // integer expressions (type i64)
  bool is_static = true;  // lo and hi read only literals, dims, derived sizes and scalars
};

// One tensor definition, evaluated for every point of its LHS index space.
struct Stage {
  std::string name;
  SourceLoc loc;
  int output = -1;                    // index into task.outputs, or -1 for an intermediate
  ValueType type = ValueType::f64;    // element type (f64 or i64)
  std::vector<IndexVar> vars;         // one per dimension; the tensor's shape is vars[d].hi
  std::vector<IndexVar> reduce_vars;  // every reduction variable of the body (Expr::rvars)
  Expr body;
  // A recurrence: the stage reads its own elements at `vars[scan_dim] - c` (c > 0 constant) with
  // every other index equal to its LHS var. The scan dim must run in ascending order (outermost
  // or at least sequential); the other dims are independent. -1 when the stage is not one.
  int scan_dim = -1;
};

struct Program {
  std::string file;
  std::vector<Stage> stages;      // in evaluation order; each reads only earlier stages (+ self)
  std::vector<int> output_stage;  // for each task output, the stage that defines it
};

// The arity and spelling of an operator ("+", "exp", "select", ...). `cast` spells "cast".
int op_arity(Op op);
std::string op_name(Op op);
std::string reduce_name(ReduceOp op);
std::string value_type_name(ValueType t);

// Pre-order walk over an expression and all its sub-expressions (indices, else values, bodies;
// not the ranges in Stage::reduce_vars).
template <typename F>
void visit(const Expr& e, F&& f) {
  f(e);
  for (const Expr& a : e.args) visit(a, f);
}
// The same walk with mutable nodes (f may edit a node's fields; it sees the children after).
template <typename F>
void visit_mut(Expr& e, F&& f) {
  f(e);
  for (Expr& a : e.args) visit_mut(a, f);
}

// Canonical text, for golden tests and debug dumps. Operators print fully parenthesized:
// `(A[i, k] * B[k, j])`. A reduction prints its decls (Ast), or, given the stage that owns its
// rvars, their resolved ranges: `sum(k in 0..K: ...)`.
std::string to_string(const Expr& e, const Stage* stage = nullptr);
std::string to_string(const Ast& ast);
std::string to_string(const Program& p);

}  // namespace kf::te
