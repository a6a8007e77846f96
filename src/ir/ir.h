// The loop-nest IR: what the lowering produces from a tensor-expression program and a schedule,
// and what codegen turns into C++. Modelled on Halide's IR: immutable, reference-counted nodes;
// expressions carry a Type (a scalar or a vector of lanes); statements are loops, stores,
// allocations and branches; buffers are referred to by name.
//
// Building a loop nest (a naive GEMM, C[i, j] = sum_k A[i, k] * B[k, j]):
//
//   using namespace kf::ir;
//   Expr M = Var::make(Type::i64(), "M"), N = Var::make(Type::i64(), "N"),
//        K = Var::make(Type::i64(), "K");
//   Expr i = Var::make(Type::i64(), "i"), j = Var::make(Type::i64(), "j"),
//        k = Var::make(Type::i64(), "k");
//   Expr c = Load::make(Type::f32(), "C", i * N + j);
//   Expr ab = Load::make(Type::f32(), "A", i * K + k) * Load::make(Type::f32(), "B", k * N + j);
//   Stmt update = For::make("k", i64(0), K, ForKind::serial, Store::make("C", i * N + j, c + ab));
//   Stmt init = Store::make("C", i * N + j, f32(0));
//   Stmt body = For::make("i", i64(0), M, ForKind::parallel,
//                 For::make("j", i64(0), N, ForKind::serial, Block::make({init, update})));
//   LoweredFunc f{"gemm", params_from_task(task), ProducerConsumer::make("C", true, body)};
//   print(f);   // ir_printer.h; codegen_cpp(f, target) in codegen/codegen_cpp.h
//
// Conventions (the lowering relies on them, codegen implements them):
// - Loop variables, dims and indices are i64. Binary operands must have equal types (the
//   operators below turn an integer literal into a constant of the other operand's type).
// - Integer Div and Mod truncate toward zero (C semantics); the lowering keeps indices
//   non-negative. Mod is integer only. Min/Max: min(a, b) = a < b ? a : b.
// - A vector lane count is a power of two up to 64 (see type.h). A vector boolean is a lane mask.
// - Load/Store index a buffer in elements of the buffer's element type. A buffer whose element
//   type is a vector (an Allocate of Type::f32(16), e.g. register accumulators) is indexed by a
//   scalar index and each element is one whole vector. For a scalar-element buffer, a Load of
//   W lanes takes an index of W lanes: Ramp(base, 1, W) is a dense vector access, any other
//   vector index a gather/scatter. A predicate (a boolean of the same lanes) masks lanes off:
//   a masked-off lane is not touched, and loads 0.
// - Expressions are pure. Both sides of a vector Select are evaluated, so guard loads that
//   could be out of bounds with a predicate, not a Select; a scalar Select is lazy.
// - Names are C-like identifiers; dots are allowed and become '_' in generated C++ ("C.s0.i").
//   Every loop, Let and Allocate name is unique within a function.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/type.h"
#include "task/task.h"

namespace kf::ir {

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

enum class ExprKind {
  int_imm,
  float_imm,
  var,
  cast,
  binary,
  not_,
  select,
  load,
  call,
  ramp,
  broadcast,
  vector_reduce,
  let
};

struct ExprNode {
  ExprNode(ExprKind k, Type t) : kind(k), type(t) {}
  virtual ~ExprNode() = default;
  const ExprKind kind;
  const Type type;
};

// A handle to an immutable expression node (null when default-constructed).
class Expr {
 public:
  Expr() = default;
  explicit Expr(std::shared_ptr<const ExprNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const ExprNode* get() const { return node_.get(); }
  ExprKind kind() const;  // requires defined()
  Type type() const;      // requires defined()
  // The node as T when it is one, else nullptr: `if (const Binary* b = e.as<Binary>()) ...`.
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::node_kind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  // Identity (not structural equality).
  bool same_as(const Expr& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const ExprNode> node_;
};

struct IntImm : ExprNode {  // an i32, i64 or boolean constant (scalar)
  static constexpr ExprKind node_kind = ExprKind::int_imm;
  int64_t value;
  static Expr make(Type t, int64_t value);
  IntImm(Type t, int64_t v) : ExprNode(node_kind, t), value(v) {}
};

struct FloatImm : ExprNode {  // an f32, f64 or bf16 constant (scalar; rounded to its type)
  static constexpr ExprKind node_kind = ExprKind::float_imm;
  double value;
  static Expr make(Type t, double value);
  FloatImm(Type t, double v) : ExprNode(node_kind, t), value(v) {}
};

// A named value: a loop variable, a Let, a dim or a scalar parameter of the function.
struct Var : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::var;
  std::string name;
  static Expr make(Type t, std::string name);
  Var(Type t, std::string n) : ExprNode(node_kind, t), name(std::move(n)) {}
};

struct Cast : ExprNode {  // numeric conversion; lanes are kept
  static constexpr ExprKind node_kind = ExprKind::cast;
  Expr value;
  static Expr make(Type t, Expr value);
  Cast(Type t, Expr v) : ExprNode(node_kind, t), value(std::move(v)) {}
};

enum class BinOp {
  add,
  sub,
  mul,
  div,
  mod,
  min,
  max,  // result: the operand type
  eq,
  ne,
  lt,
  le,
  gt,
  ge,  // result: boolean of the operand lanes
  logical_and,
  logical_or  // boolean operands and result
};

struct Binary : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::binary;
  BinOp op;
  Expr a, b;
  // Requires a.type() == b.type() (KF_CHECK).
  static Expr make(BinOp op, Expr a, Expr b);
  Binary(Type t, BinOp o, Expr x, Expr y)
      : ExprNode(node_kind, t), op(o), a(std::move(x)), b(std::move(y)) {}
};

struct Not : ExprNode {  // logical negation of a boolean
  static constexpr ExprKind node_kind = ExprKind::not_;
  Expr a;
  static Expr make(Expr a);
  Not(Type t, Expr x) : ExprNode(node_kind, t), a(std::move(x)) {}
};

struct Select : ExprNode {  // condition ? true_value : false_value
  static constexpr ExprKind node_kind = ExprKind::select;
  Expr condition, true_value, false_value;
  // The condition is scalar or has the lanes of the values.
  static Expr make(Expr condition, Expr true_value, Expr false_value);
  Select(Type t, Expr c, Expr x, Expr y)
      : ExprNode(node_kind, t),
        condition(std::move(c)),
        true_value(std::move(x)),
        false_value(std::move(y)) {}
};

struct Load : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::load;
  std::string buffer;
  Expr index;
  Expr predicate;  // undefined: every lane is loaded
  // `t` is the loaded value's type (see the conventions above for lanes).
  static Expr make(Type t, std::string buffer, Expr index, Expr predicate = Expr());
  Load(Type t, std::string buf, Expr i, Expr p)
      : ExprNode(node_kind, t),
        buffer(std::move(buf)),
        index(std::move(i)),
        predicate(std::move(p)) {}
};

// Pure math functions, applied lane-wise; the result has the type of the first argument.
// A reserved variable: the number of threads a parallel loop of the kernel runs on (codegen:
// omp_get_max_threads()). Lowering uses it to give each thread one contiguous chunk of a
// parallel loop explicitly (see lower/realize.cpp, double-buffered producers).
inline constexpr const char* kNumThreadsVar = "kf.num_threads";

enum class MathFn {
  exp,
  log,
  sqrt,
  rsqrt,
  tanh,
  erf,
  sigmoid,
  abs,
  floor,
  ceil,  // one argument
  pow,   // two: pow(x, y)
  fma    // three: x * y + z
};
int math_fn_arity(MathFn f);
std::string to_string(MathFn f);

struct Call : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::call;
  MathFn fn;
  std::vector<Expr> args;
  // f32 exp/log/tanh/erf/sigmoid by kforge's fast approximations (the `approximate` schedule
  // primitive): a cheaper polynomial, and no libm call in scalar code either.
  bool approx = false;
  // Requires the arity of fn and floating arguments of one type (abs also takes integers).
  static Expr make(MathFn fn, std::vector<Expr> args, bool approx = false);
  Call(Type t, MathFn f, std::vector<Expr> a, bool ap)
      : ExprNode(node_kind, t), fn(f), args(std::move(a)), approx(ap) {}
};

// The vector base, base + stride, ..., base + (lanes - 1) * stride.
struct Ramp : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::ramp;
  Expr base, stride;
  int lanes;
  static Expr make(Expr base, Expr stride, int lanes);
  Ramp(Type t, Expr b, Expr s, int l)
      : ExprNode(node_kind, t), base(std::move(b)), stride(std::move(s)), lanes(l) {}
};

// A scalar repeated in every lane.
struct Broadcast : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::broadcast;
  Expr value;
  int lanes;
  static Expr make(Expr value, int lanes);
  Broadcast(Type t, Expr v, int l) : ExprNode(node_kind, t), value(std::move(v)), lanes(l) {}
};

enum class ReduceOp { add, mul, min, max };
std::string to_string(ReduceOp op);

// Horizontal reduction of all lanes of a vector to a scalar (the lane order is unspecified).
struct VectorReduce : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::vector_reduce;
  ReduceOp op;
  Expr value;
  static Expr make(ReduceOp op, Expr value);
  VectorReduce(Type t, ReduceOp o, Expr v) : ExprNode(node_kind, t), op(o), value(std::move(v)) {}
};

// `let name = value in body`: body may refer to Var(value.type(), name).
struct Let : ExprNode {
  static constexpr ExprKind node_kind = ExprKind::let;
  std::string name;
  Expr value, body;
  static Expr make(std::string name, Expr value, Expr body);
  Let(Type t, std::string n, Expr v, Expr b)
      : ExprNode(node_kind, t), name(std::move(n)), value(std::move(v)), body(std::move(b)) {}
};

// Constants and operators for building expressions. A plain number next to an Expr becomes a
// constant of the Expr's type (`i * N + 1`, `x * 0.5`; integers beyond 2^53 need i64()).
Expr i64(int64_t v);
Expr i32(int64_t v);
Expr f32(double v);
Expr f64(double v);
Expr bool_imm(bool v);
Expr make_const(Type t, double v);  // a scalar constant, or a Broadcast of one for vectors
Expr make_zero(Type t);
Expr make_one(Type t);
// The value of a scalar constant (IntImm/FloatImm, or a Broadcast of one), if e is one.
bool is_const(const Expr& e);
bool is_const(const Expr& e, double v);
std::optional<int64_t> as_const_int(const Expr& e);
std::optional<double> as_const_float(const Expr& e);

Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator*(Expr a, Expr b);
Expr operator/(Expr a, Expr b);
Expr operator%(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator+(Expr a, double b);
Expr operator-(Expr a, double b);
Expr operator*(Expr a, double b);
Expr operator/(Expr a, double b);
Expr operator%(Expr a, double b);
Expr operator+(double a, Expr b);
Expr operator-(double a, Expr b);
Expr operator*(double a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr lt(Expr a, Expr b);
Expr le(Expr a, Expr b);
Expr gt(Expr a, Expr b);
Expr ge(Expr a, Expr b);
Expr logical_and(Expr a, Expr b);
Expr logical_or(Expr a, Expr b);
Expr logical_not(Expr a);
Expr select(Expr c, Expr t, Expr f);
Expr cast(Type t, Expr e);  // no node when the type is already t

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

enum class StmtKind {
  for_,
  block,
  store,
  allocate,
  if_then_else,
  let_stmt,
  evaluate,
  producer_consumer,
  comment,
  prefetch,
  transpose_block
};

struct StmtNode {
  explicit StmtNode(StmtKind k) : kind(k) {}
  virtual ~StmtNode() = default;
  const StmtKind kind;
};

class Stmt {
 public:
  Stmt() = default;
  explicit Stmt(std::shared_ptr<const StmtNode> node) : node_(std::move(node)) {}

  bool defined() const { return node_ != nullptr; }
  const StmtNode* get() const { return node_.get(); }
  StmtKind kind() const;  // requires defined()
  template <typename T>
  const T* as() const {
    return node_ && node_->kind == T::node_kind ? static_cast<const T*>(node_.get()) : nullptr;
  }
  bool same_as(const Stmt& o) const { return node_ == o.node_; }

 private:
  std::shared_ptr<const StmtNode> node_;
};

enum class ForKind {
  serial,
  parallel,    // iterations run on threads (OpenMP); at most one parallel loop active at a time
  vectorized,  // vectorize_loops turns it into vector code (constant extent); else serial
  unrolled     // unroll_loops replicates the body (constant extent); else serial
};
std::string to_string(ForKind k);

// for (name = min; name < min + extent; ++name) body — `name` is an i64 Var in body.
struct For : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::for_;
  std::string name;
  Expr min, extent;
  ForKind for_kind;
  Stmt body;
  static Stmt make(std::string name, Expr min, Expr extent, ForKind kind, Stmt body);
  For(std::string n, Expr mn, Expr ex, ForKind k, Stmt b)
      : StmtNode(node_kind),
        name(std::move(n)),
        min(std::move(mn)),
        extent(std::move(ex)),
        for_kind(k),
        body(std::move(b)) {}
};

// Statements in sequence. Block::make flattens nested blocks and drops undefined entries; it
// returns the single statement when one is left, and an empty Block when none is.
struct Block : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::block;
  std::vector<Stmt> stmts;
  static Stmt make(std::vector<Stmt> stmts);
  explicit Block(std::vector<Stmt> s) : StmtNode(node_kind), stmts(std::move(s)) {}
};

// buffer[index] = value (if predicate). Lanes of index, value and predicate follow Load's rules.
struct Store : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::store;
  std::string buffer;
  Expr index, value;
  Expr predicate;  // undefined: every lane is stored
  static Stmt make(std::string buffer, Expr index, Expr value, Expr predicate = Expr());
  Store(std::string buf, Expr i, Expr v, Expr p)
      : StmtNode(node_kind),
        buffer(std::move(buf)),
        index(std::move(i)),
        value(std::move(v)),
        predicate(std::move(p)) {}
};

enum class MemoryKind {
  stack,  // a local array; with a small constant extent the compiler keeps it in registers
  heap    // 64-byte aligned heap memory, freed at the end of body
};
std::string to_string(MemoryKind m);

// A buffer `name` of `extent` elements of `element_type` (a scalar or vector type), live in
// body. Its contents start undefined.
struct Allocate : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::allocate;
  std::string name;
  Type element_type;
  Expr extent;  // i64
  MemoryKind memory;
  Stmt body;
  static Stmt make(std::string name, Type element_type, Expr extent, MemoryKind memory, Stmt body);
  Allocate(std::string n, Type t, Expr e, MemoryKind m, Stmt b)
      : StmtNode(node_kind),
        name(std::move(n)),
        element_type(t),
        extent(std::move(e)),
        memory(m),
        body(std::move(b)) {}
};

struct IfThenElse : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::if_then_else;
  Expr condition;  // scalar boolean (vectorize_loops turns vector conditions into predicates)
  Stmt then_case, else_case;  // else_case may be undefined
  static Stmt make(Expr condition, Stmt then_case, Stmt else_case = Stmt());
  IfThenElse(Expr c, Stmt t, Stmt e)
      : StmtNode(node_kind),
        condition(std::move(c)),
        then_case(std::move(t)),
        else_case(std::move(e)) {}
};

struct LetStmt : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::let_stmt;
  std::string name;
  Expr value;
  Stmt body;
  static Stmt make(std::string name, Expr value, Stmt body);
  LetStmt(std::string n, Expr v, Stmt b)
      : StmtNode(node_kind), name(std::move(n)), value(std::move(v)), body(std::move(b)) {}
};

struct Evaluate : StmtNode {  // evaluates an expression for nothing (a no-op placeholder)
  static constexpr StmtKind node_kind = StmtKind::evaluate;
  Expr value;
  static Stmt make(Expr value);
  explicit Evaluate(Expr v) : StmtNode(node_kind), value(std::move(v)) {}
};

// Marks the statements that produce (or consume) a stage; codegen emits a `// produce NAME`
// comment, so the generated code reads stage by stage.
struct ProducerConsumer : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::producer_consumer;
  std::string name;
  bool is_producer;
  Stmt body;
  static Stmt make(std::string name, bool is_producer, Stmt body);
  ProducerConsumer(std::string n, bool p, Stmt b)
      : StmtNode(node_kind), name(std::move(n)), is_producer(p), body(std::move(b)) {}
};

struct Comment : StmtNode {  // a one-line comment carried into the generated code
  static constexpr StmtKind node_kind = StmtKind::comment;
  std::string text;
  static Stmt make(std::string text);
  explicit Comment(std::string t) : StmtNode(node_kind), text(std::move(t)) {}
};

// A hint that buffer[index] will be read soon: codegen emits a cache prefetch of that address
// (of lane 0 for a vector index). It has no effect on results, and prefetching past the end of
// a buffer is harmless (the address is computed in integer arithmetic and never dereferenced).
struct Prefetch : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::prefetch;
  std::string buffer;
  Expr index;
  static Stmt make(std::string buffer, Expr index);
  Prefetch(std::string b, Expr i)
      : StmtNode(node_kind), buffer(std::move(b)), index(std::move(i)) {}
};

// A square block of `lanes` x `lanes` scalars of `type` copied transposed:
//   dst[dst_index + r * dst_stride + c] = src[src_index + c * src_stride + r]  for r, c in [0,
//   lanes)
// Both buffers hold `type` (f32) and are different buffers. lower/transpose_copies makes it from
// a copy nest that transposes (a packed panel of a weight stored the other way round); codegen
// emits it as a transpose in registers: `lanes` rows of src loaded as vectors, shuffled, and
// stored as `lanes` rows of dst.
struct TransposeBlock : StmtNode {
  static constexpr StmtKind node_kind = StmtKind::transpose_block;
  std::string dst;
  Expr dst_index, dst_stride;
  std::string src;
  Expr src_index, src_stride;
  Type type;
  int lanes;
  static Stmt make(std::string dst, Expr dst_index, Expr dst_stride, std::string src,
                   Expr src_index, Expr src_stride, Type type, int lanes);
  TransposeBlock(std::string d, Expr di, Expr ds, std::string s, Expr si, Expr ss, Type t, int l)
      : StmtNode(node_kind),
        dst(std::move(d)),
        dst_index(std::move(di)),
        dst_stride(std::move(ds)),
        src(std::move(s)),
        src_index(std::move(si)),
        src_stride(std::move(ss)),
        type(t),
        lanes(l) {}
};

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

enum class ParamKind { input, output, dim, scalar };
std::string to_string(ParamKind k);

// A parameter of the kernel function. Tensors (input, output) are buffers of `type`'s scalar
// kind, referenced by name in Load/Store; dims (i64) and scalars are Vars of `type`.
struct Param {
  std::string name;
  ParamKind kind = ParamKind::dim;
  Type type = Type::i64();
};

// A kernel: the task's function with its parameters in kernel-ABI order (docs/task-format.md).
struct LoweredFunc {
  std::string name;
  std::vector<Param> params;
  Stmt body;
  // Output buffers whose full-vector stores bypass the caches (the `nontemporal` primitive).
  std::set<std::string> nontemporal = {};
};

// The task's parameters in ABI order: inputs, outputs, dims, scalars. Floating scalars of a
// bf16 task are f32 (the ABI passes them as float).
std::vector<Param> params_from_task(const Task& task);

// The Var of a dim or scalar parameter (requires kind dim or scalar).
Expr param_var(const Param& p);

}  // namespace kf::ir
