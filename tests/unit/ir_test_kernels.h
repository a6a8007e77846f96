// Loop nests built by hand for the IR and codegen tests, shaped like what the lowering produces
// for jaxbench tasks 08_gemm and 12_rmsnorm. Each returns the body before the passes; run
// `prepare` (simplify → unroll → vectorize → simplify) before codegen.
//
//   LoweredFunc f{"gemm", params_from_task(task), tiled_gemm_body()};
//   f.body = prepare(f.body);
//   std::string src = codegen_cpp(f, CodegenTarget::avx512);
#pragma once

#include "ir/ir.h"
#include "ir/simplify.h"
#include "ir/unroll_loops.h"
#include "ir/vectorize_loops.h"

namespace kf::testing_ir {

using namespace kf::ir;

inline Expr ivar(const char* name) {
  return Var::make(Type::i64(), name);
}
inline Expr fload(const char* buf, Expr index) {
  return Load::make(Type::f32(), buf, index);
}

inline Stmt prepare(const Stmt& s) {
  return simplify(vectorize_loops(unroll_loops(simplify(s))));
}

// C[i, j] = sum_k A[i, k] * B[k, j], accumulating in C, parallel over rows.
inline Stmt naive_gemm_body() {
  Expr M = ivar("M"), N = ivar("N"), K = ivar("K"), i = ivar("i"), j = ivar("j"), k = ivar("k");
  Expr c = i * N + j;
  Stmt update = Store::make("C", c, fload("C", c) + fload("A", i * K + k) * fload("B", k * N + j));
  Stmt body = Block::make(
      {Store::make("C", c, f32(0)), For::make("k", i64(0), K, ForKind::serial, update)});
  return ProducerConsumer::make("C", true,
                                For::make("i", i64(0), M, ForKind::parallel,
                                          For::make("j", i64(0), N, ForKind::serial, body)));
}

// One 4x16 register tile of C at rows [i.base, i.base + 4) and columns [j0, j0 + 16). Rows past
// M read row M - 1 and are not stored; when `masked`, columns past N are predicated off.
inline Stmt gemm_tile(const Expr& j0, bool masked) {
  Expr M = ivar("M"), N = ivar("N"), K = ivar("K"), k = ivar("k"), ii = ivar("ii"), jj = ivar("jj"),
       ibase = ivar("i.base"), irows = ivar("i.rows");
  Expr acc = ii * 16 + jj;
  Expr col = j0 + jj;
  auto guard = [&](Stmt s) { return masked ? IfThenElse::make(lt(col, N), s) : s; };
  auto tile_loop = [&](Stmt s) {  // unrolled over 4 rows, vectorized over 16 columns
    return For::make("ii", i64(0), i64(4), ForKind::unrolled,
                     For::make("jj", i64(0), i64(16), ForKind::vectorized, s));
  };
  Stmt init = tile_loop(Store::make("acc", acc, f32(0)));
  Expr a = fload("A", min(ibase + ii, M - 1) * K + k);
  Stmt update = For::make(
      "k", i64(0), K, ForKind::serial,
      tile_loop(guard(Store::make("acc", acc, fload("acc", acc) + a * fload("B", k * N + col)))));
  Stmt out =
      For::make("ii", i64(0), i64(4), ForKind::unrolled,
                IfThenElse::make(
                    lt(ii, irows),
                    For::make("jj", i64(0), i64(16), ForKind::vectorized,
                              guard(Store::make("C", (ibase + ii) * N + col, fload("acc", acc))))));
  return Allocate::make("acc", Type::f32(), i64(64), MemoryKind::stack,
                        Block::make({init, update, out}));
}

// Tiled GEMM: parallel over 4-row tiles, full 16-column tiles, then one masked column tail.
inline Stmt tiled_gemm_body() {
  Expr M = ivar("M"), N = ivar("N"), io = ivar("i.o"), jo = ivar("j.o");
  Stmt full = For::make("j.o", i64(0), N / 16, ForKind::serial, gemm_tile(jo * 16, false));
  Stmt tail = IfThenElse::make(gt(N % 16, i64(0)),
                               Block::make({Comment::make("column tail: N % 16 columns, masked"),
                                            gemm_tile(N / 16 * 16, true)}));
  Stmt row_tile = LetStmt::make(
      "i.base", io * 4,
      LetStmt::make("i.rows", min(M - ivar("i.base"), i64(4)), Block::make({full, tail})));
  return ProducerConsumer::make("C", true,
                                For::make("i.o", i64(0), (M + 3) / 4, ForKind::parallel, row_tile));
}

// y[n, d] = x[n, d] * (1 / sqrt(sum_d x[n, d]^2 / D + eps)) * w[d]: a 16-lane vector sum of
// squares reduced horizontally, a scalar tail, and a masked vector output loop.
inline Stmt rmsnorm_body() {
  Expr N = ivar("N"), D = ivar("D"), n = ivar("n"), di = ivar("d.i"), dout = ivar("d.o"),
       d = ivar("d");
  Expr eps = Var::make(Type::f32(), "eps");
  Expr xi = n * D + dout * 16 + di;
  Stmt zero = For::make("d.i", i64(0), i64(16), ForKind::vectorized, Store::make("ss", di, f32(0)));
  Stmt sum = For::make(
      "d.o", i64(0), D / 16, ForKind::serial,
      For::make("d.i", i64(0), i64(16), ForKind::vectorized,
                Store::make("ss", di, fload("ss", di) + fload("x", xi) * fload("x", xi))));
  Stmt total0 = Store::make("total", i64(0), f32(0));
  Stmt fold = For::make("d.i", i64(0), i64(16), ForKind::vectorized,
                        Store::make("total", i64(0), fload("total", i64(0)) + fload("ss", di)));
  Expr xd = fload("x", n * D + d);
  Stmt tail = For::make("d", D / 16 * 16, D % 16, ForKind::serial,
                        Store::make("total", i64(0), fload("total", i64(0)) + xd * xd));
  Expr r = Var::make(Type::f32(), "r");
  Expr rms = Call::make(MathFn::sqrt, {fload("total", i64(0)) / Cast::make(Type::f32(), D) + eps});
  Stmt out = For::make(
      "d.o", i64(0), (D + 15) / 16, ForKind::serial,
      For::make(
          "d.i", i64(0), i64(16), ForKind::vectorized,
          IfThenElse::make(lt(dout * 16 + di, D),
                           Store::make("y", xi, fload("x", xi) * r * fload("w", dout * 16 + di)))));
  Stmt row = Allocate::make("ss", Type::f32(), i64(16), MemoryKind::stack,
                            Allocate::make("total", Type::f32(), i64(1), MemoryKind::stack,
                                           Block::make({zero, sum, total0, fold, tail,
                                                        LetStmt::make("r", f32(1) / rms, out)})));
  return ProducerConsumer::make("y", true, For::make("n", i64(0), N, ForKind::parallel, row));
}

}  // namespace kf::testing_ir
