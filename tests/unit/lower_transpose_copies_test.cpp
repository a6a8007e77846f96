#include <gtest/gtest.h>

#include "ir/ir_printer.h"
#include "lower/transpose_copies.h"
#include "lower_test_util.h"

namespace kf {
namespace {

using ir::Expr;
using ir::ForKind;
using ir::Stmt;

Expr var(const std::string& n) {
  return ir::Var::make(ir::Type::i64(), n);
}

// for (o, 0, O) { for (i, 0, I) { Wt[o + i*64] = W[(x*64 + o)*I + i] } } inside an f32
// allocation Wt: 50's transposed weight panel. `value` replaces the load when given.
Stmt pack_nest(Expr o_extent, Expr i_extent, ForKind outer = ForKind::serial,
               ir::Type wt_type = ir::Type::f32(), Expr value = Expr()) {
  Expr o = var("o"), i = var("i");
  Expr load = ir::Load::make(ir::Type::f32(), "W", (var("x") * ir::i64(64) + o) * var("I") + i);
  Stmt st = ir::Store::make("Wt", o + i * ir::i64(64), value.defined() ? value : load);
  Stmt nest = ir::For::make("o", ir::i64(0), o_extent, outer,
                            ir::For::make("i", ir::i64(0), i_extent, ForKind::serial, st));
  return ir::Allocate::make("Wt", wt_type, var("I") * ir::i64(64), ir::MemoryKind::heap, nest);
}

std::string transposed(const Stmt& s, int lanes = 16) {
  lowering::TransposeOptions o{.lanes = lanes, .f32_params = {"W"}};
  return ir::to_string(lowering::transpose_copies(s, o));
}

TEST(TransposeCopies, BlocksTheTransposingPackAndKeepsTheLeftovers) {
  const std::string out = transposed(pack_nest(var("E"), var("I")));
  // Whole 16 x 16 blocks: dst rows are i (stride 64), src rows are o (stride I).
  EXPECT_NE(out.find("for (o.tb, 0, E/16)"), std::string::npos) << out;
  EXPECT_NE(out.find("for (i.tb, 0, I/16)"), std::string::npos) << out;
  EXPECT_NE(out.find("transpose 16x16 f32 Wt[o.tb*16 + i.tb*16*64 + r*64 + c] = "
                     "W[(x*64 + o.tb*16)*I + i.tb*16 + c*I + r]"),
            std::string::npos)
      << out;
  // The columns past the last block for each block's rows, then the rows past the last block.
  EXPECT_NE(out.find("for (o.tl, 0, 16)"), std::string::npos) << out;
  EXPECT_NE(out.find("for (i, I/16*16, I - I/16*16)"), std::string::npos) << out;
  EXPECT_NE(out.find("for (o, E/16*16, E - E/16*16)"), std::string::npos) << out;
}

TEST(TransposeCopies, EightLanesAndAParallelOuterLoop) {
  const std::string out = transposed(pack_nest(var("E"), var("I"), ForKind::parallel), 8);
  EXPECT_NE(out.find("parallel for (o.tb, 0, E/8)"), std::string::npos) << out;
  EXPECT_NE(out.find("transpose 8x8 f32"), std::string::npos) << out;
  // The leftover rows are fewer than 8: serial.
  EXPECT_NE(out.find("for (o, E/8*8, E - E/8*8)"), std::string::npos) << out;
  EXPECT_EQ(out.find("parallel for (o, "), std::string::npos) << out;
}

TEST(TransposeCopies, LeavesEveryOtherNestAsItIs) {
  auto unchanged = [](const Stmt& s, const std::set<std::string>& f32 = {"W"}) {
    lowering::TransposeOptions o{.lanes = 16, .f32_params = f32};
    return ir::to_string(lowering::transpose_copies(s, o)) == ir::to_string(s);
  };
  // Not f32 on both sides: a bf16 panel, an input not known to be f32.
  EXPECT_TRUE(unchanged(pack_nest(var("E"), var("I"), ForKind::serial, ir::Type::bf16())));
  EXPECT_TRUE(unchanged(pack_nest(var("E"), var("I")), {}));
  // The value is not a plain load.
  Expr scaled = ir::Load::make(ir::Type::f32(), "W",
                               (var("x") * ir::i64(64) + var("o")) * var("I") + var("i")) *
                ir::f32(2.0f);
  EXPECT_TRUE(unchanged(pack_nest(var("E"), var("I"), ForKind::serial, ir::Type::f32(), scaled)));
  // A constant extent below one block.
  EXPECT_TRUE(unchanged(pack_nest(ir::i64(8), var("I"))));
  // Inside a vectorized loop, or with the outer loop unrolled.
  EXPECT_TRUE(unchanged(ir::For::make("v", ir::i64(0), ir::i64(4), ForKind::vectorized,
                                      pack_nest(var("E"), var("I")))));
  EXPECT_TRUE(unchanged(pack_nest(ir::i64(32), var("I"), ForKind::unrolled)));
  // for (o, 0, E) { for (i, 0, inner) { Wt[dst] = W[o*I + i] } } in an f32 allocation.
  auto copy_nest = [](Expr dst, Expr inner) {
    Stmt st = ir::Store::make("Wt", dst,
                              ir::Load::make(ir::Type::f32(), "W", var("o") * var("I") + var("i")));
    Stmt nest = ir::For::make("o", ir::i64(0), var("E"), ForKind::serial,
                              ir::For::make("i", ir::i64(0), inner, ForKind::serial, st));
    return ir::Allocate::make("Wt", ir::Type::f32(), var("I") * var("E"), ir::MemoryKind::heap,
                              nest);
  };
  // Not transposing: both indices have unit stride in the inner variable (a plain copy).
  EXPECT_TRUE(unchanged(copy_nest(var("o") * var("I") + var("i"), var("I"))));
  // A dst stride below the block's side would make a block's stores overlap.
  EXPECT_TRUE(unchanged(copy_nest(var("o") + var("i") * ir::i64(4), var("I"))));
  // The inner loop's bounds move with the outer variable (a triangle).
  EXPECT_TRUE(unchanged(copy_nest(var("o") + var("i") * ir::i64(64), var("o"))));
  // The transposing form of the same nest is blocked (the cases above differ in one thing).
  EXPECT_FALSE(unchanged(copy_nest(var("o") + var("i") * ir::i64(64), var("I"))));
}

// Judged on every test shape of 50 (O = 7 .. 344 and I = 1 .. 256: blocks, leftover rows and
// columns, and panels with no whole block), with the weight panel packed transposed.
constexpr const char* k50Tile =
    "compute_inline z\nsplit g.b b.o b.i 6\nsplit g.o o.o o.i 64\nreorder g o.o b.o b.i o.i\n"
    "unroll g.b.i\nvectorize g.o.i 16\ncompute_at z_r g.b.o\nreorder z_r i b o\nunroll z_r.b\n"
    "vectorize z_r.o 16\ncache_read W z_r W_pk\nreorder_storage W_pk i o\ncompute_at W_pk g.o.o\n";

TEST(TransposeCopies, GeneratedPacksPassTheJudge) {
  const Task task = testing::task_at("bench/jaxbench/50_matmul_gelu_softmax");
  auto src = generate_kernel(task, testing::schedule_of(k50Tile), {});
  ASSERT_TRUE(src.has_value()) << src.error().message();
  ASSERT_NE(src->find("kf_transpose_f32x16("), std::string::npos) << *src;
  EXPECT_EQ(testing::judge(task, *src), "ok");
  // AVX2: 8 x 8 blocks.
  auto avx2 = generate_kernel(task, testing::schedule_of(k50Tile), {.target = CodegenTarget::avx2});
  ASSERT_TRUE(avx2.has_value()) << avx2.error().message();
  ASSERT_NE(avx2->find("kf_transpose_f32x8("), std::string::npos) << *avx2;
  EXPECT_EQ(testing::judge(task, *avx2), "ok");
  // The pack's rows in parallel (the panel loop serial), at 1, 2 and 3 threads.
  const std::string par = std::string(k50Tile) + "parallel W_pk.o\n";
  for (int threads : {1, 2, 3})
    EXPECT_EQ(testing::lower_and_judge(task, par, 7, threads), "ok") << threads << " threads";
  // Double buffered: single rows are filled inside the micro-kernel (not blocked), the rows left
  // at the end of each panel as blocks.
  EXPECT_EQ(testing::lower_and_judge(task, std::string(k50Tile) + "double_buffer W_pk z_r.i 16\n"),
            "ok");
}

}  // namespace
}  // namespace kf
