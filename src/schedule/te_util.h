// Small builders and rewriters for checked TE expressions (te/ast.h), used by the pipeline's
// normalization, the schedule primitives that create stages, and lowering.
//
//   te::Expr k = var_ref(te::RefKind::reduce_var, 0, "k");
//   te::Expr idx = binary(te::Op::add, binary(te::Op::mul, k, int_lit(16)), u);   // k*16 + u
//   te::Expr a = stage_access("C_acc", 3, {i, j}, te::ValueType::f64);
//   te::Expr b = map_names(body, [&](const te::Expr& n) -> std::optional<te::Expr> {
//     if (n.ref.kind == te::RefKind::index_var) return vars[n.ref.index];
//     return std::nullopt;                                 // keep
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "task/task.h"
#include "te/ast.h"

namespace kf::sched {

te::Expr int_lit(int64_t v);
te::Expr float_lit(double v);
// A reference to an index var, reduce var, dim, derived size or scalar (type i64, or f64 for
// floating scalars: pass the type).
te::Expr var_ref(te::RefKind kind, int index, const std::string& name,
                 te::ValueType type = te::ValueType::i64);
// An access to stage `stage` (RefKind::stage) of element type `type`.
te::Expr stage_access(const std::string& name, int stage, std::vector<te::Expr> indices,
                      te::ValueType type);
// A call of a binary operator with its result type set (as sema would).
te::Expr binary(te::Op op, te::Expr a, te::Expr b);
// A call of a one-argument float function (exp, tanh, sqrt, ...).
te::Expr float_call(te::Op op, te::Expr x);
te::Expr logical_and(te::Expr a, te::Expr b);
// The factors of a float product, left to right (`a * (b * c)` -> a, b, c); e itself if it is
// not one.
void flatten_product(const te::Expr& e, std::vector<te::Expr>& out);

// Rebuilds `e` bottom-up, replacing each `name` node for which `f` returns a value (the
// replacement is not visited again). Access and reduce nodes keep their fields.
te::Expr map_names(const te::Expr& e,
                   const std::function<std::optional<te::Expr>(const te::Expr&)>& f);
// Rebuilds `e`, replacing each access node for which `f` returns a value; `f` sees the access
// with its arguments already rewritten.
te::Expr map_accesses(const te::Expr& e,
                      const std::function<std::optional<te::Expr>(const te::Expr&)>& f);
// Applies `f` to every RefKind::stage ref (accesses) in place.
void remap_stage_refs(te::Expr& e, const std::function<int(int)>& f);
// Applies `f` to every reduce_var index (names and reduce nodes' rvars) in place.
void remap_rvars(te::Expr& e, const std::function<int(int)>& f);

// Whether `e` reads stage `s` / any stage or input access at all / the given var.
bool reads_stage(const te::Expr& e, int s);
bool uses_var(const te::Expr& e, te::RefKind kind, int index);
// Whether index `idx` of an access in stage `s` is always within [0, extent): it is one of the
// stage's LHS variables, whose range is that same extent (compared as text).
bool index_within(const te::Expr& idx, const std::vector<te::IndexVar>& stage_vars,
                  const te::Expr& extent);

// A shape formula of the task as a resolved, integer TE expression (names become dim, derived
// or scalar refs).
te::Expr formula_to_te(const Formula& f, const Task& task);

// How many of e's leading operands are always evaluated: all but a select's branches and an
// access's `else` value (those are evaluated lazily, so nothing in them may be computed eagerly).
size_t eager_operands(const te::Expr& e);

// What evaluating `e` once costs, roughly: 1 per float operation (index arithmetic is free), 8 per
// division or square root, 20 per exp/log/tanh/erf/sigmoid/pow, 100 per reduction (a loop of work).
// hoist uses it to pick what is worth a stage; the planner, to estimate what hoisting saves.
int expr_cost(const te::Expr& e);

// Whether x is a reduction vectorize_reductions runs as vector partial results: a reduce node
// over one variable that combines floats with sum, product, max, min or logsumexp and has no
// reduction inside it (an inner one would run its own loop per lane).
bool vectorizable_reduce(const te::Expr& x);
// Whether `approximate` has a fast f32 form for op (exp, log, tanh, erf, sigmoid).
bool approximable(te::Op op);
// The calls in e that `approximate` would mark (approximable, not marked yet).
int approximable_calls(const te::Expr& e);
// x if e is softplus: log(1 + exp(x)) or log(exp(x) + 1); null otherwise.
const te::Expr* softplus_arg(const te::Expr& e);
// The tanh(softplus(x)) compositions in e (Mish), which `approximate` rewrites as one exp.
int tanh_softplus_calls(const te::Expr& e);

// The reads in e whose index reads a tensor at an index that divides a variable by a dim (06's
// k_pages[page_table[n, t / PS], t % PS, h / G, d]: the page table read at t / PS). hoist_gathers
// runs the divided variables' loops by pages so that index is read once per page.
int divided_gathers(const te::Expr& e);
// The reads in e whose index reads a tensor (14's rhs[grp[m], k, n]): specialize_uniform's
// evidence.
int gathered_reads(const te::Expr& e);

// Integer value of a number literal or of a static expression folded without an environment
// (literal arithmetic only), if it is one.
std::optional<int64_t> const_int(const te::Expr& e);

}  // namespace kf::sched
