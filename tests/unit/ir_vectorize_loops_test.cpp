// vectorize_loops: loops of kind vectorized become Ramp/Broadcast vector code.
#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "ir/vectorize_loops.h"
#include "unit/ir_test_kernels.h"
#include "unit/ir_test_util.h"

namespace kf::ir {
namespace {

using namespace testing_ir;

std::string vec(const Stmt& s) {
  return to_string(vectorize_loops(s));
}

Stmt vloop(const char* v, int lanes, Stmt body) {
  return For::make(v, i64(0), i64(lanes), ForKind::vectorized, body);
}

TEST(VectorizeLoops, DenseLoadsAndStores) {
  Expr i = ivar("i"), j = ivar("j"), N = ivar("N");
  Stmt s = vloop("j", 16, Store::make("C", i * N + j, fload("A", i * N + j) * 2.0));
  EXPECT_EQ(vec(s), "C[ramp(i*N, 1, 16)] = A[ramp(i*N, 1, 16)]*x16(2.0f)\n");
}

TEST(VectorizeLoops, LoopMinAndStridedAccess) {
  Expr j = ivar("j");
  Stmt s = For::make("j", ivar("j0"), i64(8), ForKind::vectorized,
                     Store::make("y", j, fload("x", j * 3) + cast(Type::f32(), j)));
  EXPECT_EQ(vec(s), "y[ramp(j0, 1, 8)] = x[ramp(j0*3, 3, 8)] + f32x8(ramp(j0, 1, 8))\n");
}

TEST(VectorizeLoops, UniformValuesAreBroadcast) {
  Expr j = ivar("j"), k = ivar("k");
  Stmt s = vloop("j", 4, Store::make("y", j, fload("a", k) + f32(1)));
  EXPECT_EQ(vec(s), "y[ramp(0, 1, 4)] = x4(a[k] + 1.0f)\n");
}

TEST(VectorizeLoops, InnerSerialLoopsStay) {
  Expr j = ivar("j"), k = ivar("k");
  Stmt s = vloop("j", 16,
                 For::make("k", i64(0), ivar("K"), ForKind::serial,
                           Store::make("acc", j, fload("acc", j) + fload("B", k * 16 + j))));
  EXPECT_EQ(vec(s),
            "for (k, 0, K) {\n"
            "  acc[ramp(0, 1, 16)] = acc[ramp(0, 1, 16)] + B[ramp(k*16, 1, 16)]\n"
            "}\n");
}

TEST(VectorizeLoops, VectorConditionsBecomePredicates) {
  Expr j = ivar("j"), n = ivar("n");
  Stmt s = vloop("j", 8,
                 IfThenElse::make(lt(j, n), Store::make("y", j, fload("x", j) + fload("a", i64(0))),
                                  Store::make("y", j, f32(0))));
  expect_checks(vec(s), {"let j.mask0 = ramp(0, 1, 8) < x8(n)\n",
                         "y[ramp(0, 1, 8)] = x[ramp(0, 1, 8)] if j.mask0 + x8(a[0]) if j.mask0\n",
                         "y[ramp(0, 1, 8)] = x8(0.0f) if !j.mask0\n"});
}

TEST(VectorizeLoops, ReductionsToAScalarBecomeVectorReduce) {
  Expr j = ivar("j");
  Stmt s =
      vloop("j", 16, Store::make("s", i64(0), fload("s", i64(0)) + fload("x", j) * fload("x", j)));
  EXPECT_EQ(vec(s), "s[0] = s[0] + reduce_add(x[ramp(0, 1, 16)]*x[ramp(0, 1, 16)])\n");
  Stmt m = vloop("j", 8, Store::make("m", i64(0), max(fload("x", j), fload("m", i64(0)))));
  EXPECT_EQ(vec(m), "m[0] = max(m[0], reduce_max(x[ramp(0, 1, 8)]))\n");
}

TEST(VectorizeLoops, LetsBecomeVectors) {
  Expr j = ivar("j");
  Expr t = Var::make(Type::f32(), "t");
  Stmt s = vloop("j", 4, LetStmt::make("t", fload("x", j), Store::make("y", j, t * t)));
  EXPECT_EQ(vec(s), "let t = x[ramp(0, 1, 4)]\ny[ramp(0, 1, 4)] = t*t\n");
}

TEST(VectorizeLoops, FallsBackToSerialWithAReason) {
  Expr j = ivar("j"), n = ivar("n");
  Stmt st = Store::make("y", j, f32(0));
  expect_checks(
      vec(For::make("j", i64(0), n, ForKind::vectorized, st)),
      {"for (j, 0, n) {", "// not vectorized: extent n is not a constant", "y[j] = 0.0f"});
  expect_checks(vec(vloop("j", 3, st)), {"// not vectorized: extent 3 is not a power of two"});
  expect_checks(vec(vloop("j", 8, For::make("k", i64(0), j, ForKind::serial, st))),
                {"// not vectorized: loop k has bounds that depend on j"});
  expect_checks(vec(vloop("j", 8, Allocate::make("t", Type::f32(), i64(8), MemoryKind::heap, st))),
                {"// not vectorized: allocation t inside"});
  // A per-lane buffer must not be indexed by the vectorized variable.
  expect_checks(vec(vloop("j", 8,
                          Allocate::make("t", Type::f32(), i64(8), MemoryKind::stack,
                                         Store::make("t", j, f32(0))))),
                {"// not vectorized: a per-lane buffer t indexed by j"});
  expect_checks(
      vec(vloop("j", 8, Store::make("y", i64(0), fload("y", i64(1)) + fload("x", j)))),
      {"// not vectorized: a vector value stored to a scalar index of y (not a reduction)"});
  expect_checks(vec(vloop("j", 8, IfThenElse::make(lt(j, n), Store::make("y", i64(0), f32(1))))),
                {"// not vectorized: a scalar store to y under a vector condition"});
}

// An inline reduction's accumulator allocated inside the loop (o[i, d] = sum(j: p[i, j] *
// v[j, d]) / den[i], vectorized along d): one accumulator per lane, a buffer of vectors.
TEST(VectorizeLoops, AScalarAccumulatorInsideGetsOneCopyPerLane) {
  Expr d = ivar("d"), k = ivar("k"), n = ivar("n");
  Stmt body = Block::make(
      {Store::make("acc", i64(0), f32(0)),
       For::make("k", i64(0), n, ForKind::serial,
                 Store::make("acc", i64(0),
                             fload("acc", i64(0)) + fload("p", k) * fload("v", k * 16 + d))),
       Store::make("o", d, fload("acc", i64(0)) / fload("den", i64(0)))});
  Stmt s = vloop("d", 16, Allocate::make("acc", Type::f32(), i64(1), MemoryKind::stack, body));
  expect_checks(vec(s), {"allocate acc: f32x16[1] on stack {", "acc[0] = x16(0.0f)",
                         "acc[0] = acc[0] + x16(p[k])*v[ramp(k*16, 1, 16)]",
                         "o[ramp(0, 1, 16)] = acc[0]/x16(den[0])"});
  // Under a vector condition the inactive lanes keep their value.
  Stmt c = vloop("d", 8,
                 Allocate::make("acc", Type::f32(), i64(1), MemoryKind::stack,
                                IfThenElse::make(lt(d, n), Store::make("acc", i64(0), f32(1)))));
  expect_checks(vec(c), {"acc[0] = select(d.mask0, x8(1.0f), acc[0])"});
}

TEST(VectorizeLoops, NestedVectorizedLoopsVectorizeTheInnerOne) {
  Expr a = ivar("a"), b = ivar("b");
  Stmt s = vloop("a", 4, vloop("b", 8, Store::make("y", a * 8 + b, f32(1))));
  expect_checks(vec(s), {"for (a, 0, 4) {", "// not vectorized: a ramp inside",
                         "y[ramp(a*8, 1, 8)] = x8(1.0f)"});
}

}  // namespace
}  // namespace kf::ir
