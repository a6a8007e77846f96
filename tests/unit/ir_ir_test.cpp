// Node construction: types, operators, Block flattening, parameters from a task, and the
// KF_CHECKs that catch malformed IR at construction.
#include "ir/ir.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "ir/ir_printer.h"
#include "unit/ir_test_kernels.h"

namespace kf::ir {
namespace {

using testing_ir::ivar;

TEST(IrTypes, NamesAndLanes) {
  EXPECT_EQ(to_string(Type::f32(16)), "f32x16");
  EXPECT_EQ(to_string(Type::boolean()), "bool");
  EXPECT_EQ(Type::bf16().bytes(), 2);
  EXPECT_TRUE(Type::bf16().is_float());
  EXPECT_TRUE(Type::i32(4).is_vector());
  EXPECT_EQ(Type::f64(8).scalar(), Type::f64());
  EXPECT_EQ(type_of(DType::i64), Type::i64());
  EXPECT_TRUE(is_valid_lanes(64));
  EXPECT_FALSE(is_valid_lanes(3));
  EXPECT_FALSE(is_valid_lanes(128));
}

TEST(IrExpr, OperatorsMakeConstantsOfTheOtherType) {
  Expr i = ivar("i");
  Expr e = i * 4 + 1;
  const Binary* add = e.as<Binary>();
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->op, BinOp::add);
  EXPECT_EQ(add->b.type(), Type::i64());
  EXPECT_EQ(as_const_int(add->b), 1);
  Expr x = Var::make(Type::f32(), "x");
  EXPECT_EQ((x * 0.5).as<Binary>()->b.type(), Type::f32());
  EXPECT_EQ(lt(i, i64(3)).type(), Type::boolean());
  EXPECT_EQ((-x).as<Binary>()->op, BinOp::sub);
  EXPECT_EQ(cast(Type::f32(), x).get(), x.get()) << "cast to the same type is no node";
}

TEST(IrExpr, ConstantsRoundToTheirType) {
  EXPECT_EQ(as_const_float(f32(0.1)), static_cast<double>(0.1f));
  EXPECT_EQ(as_const_float(FloatImm::make(Type::bf16(), 1.0 / 3)), 0.333984375);
  EXPECT_EQ(as_const_int(i32(int64_t{1} << 32)), 0);
  EXPECT_EQ(as_const_int(make_const(Type::i64(8), 3)), 3);
  EXPECT_EQ(make_const(Type::f32(16), 1).type(), Type::f32(16));
  EXPECT_TRUE(is_const(make_zero(Type::f64()), 0));
  EXPECT_FALSE(is_const(ivar("i")));
}

TEST(IrExpr, VectorNodes) {
  Expr r = Ramp::make(ivar("j"), i64(1), 16);
  EXPECT_EQ(r.type(), Type::i64(16));
  Expr l = Load::make(Type::f32(16), "A", r, lt(r, Broadcast::make(ivar("n"), 16)));
  EXPECT_EQ(VectorReduce::make(ReduceOp::add, l).type(), Type::f32());
  EXPECT_EQ(Call::make(MathFn::fma, {l, l, l}).type(), Type::f32(16));
  EXPECT_EQ(math_fn_arity(MathFn::pow), 2);
}

TEST(IrStmt, BlockFlattens) {
  Stmt a = Store::make("y", i64(0), f32(1)), b = Store::make("y", i64(1), f32(2));
  Stmt s = Block::make({a, Block::make({b, Stmt()}), Block::make({})});
  ASSERT_NE(s.as<Block>(), nullptr);
  EXPECT_EQ(s.as<Block>()->stmts.size(), 2u);
  EXPECT_TRUE(Block::make({a}).same_as(a));
  EXPECT_TRUE(Block::make({}).as<Block>()->stmts.empty());
}

TEST(IrFunc, ParamsFromTask) {
  auto task =
      load_task(std::filesystem::path(KFORGE_TEST_SOURCE_DIR) / "bench/jaxbench/12_rmsnorm");
  ASSERT_TRUE(task) << task.error().message();
  std::vector<Param> p = params_from_task(*task);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p[0].name, "x");
  EXPECT_EQ(p[0].kind, ParamKind::input);
  EXPECT_EQ(p[2].name, "y");
  EXPECT_EQ(p[2].kind, ParamKind::output);
  EXPECT_EQ(p[3].name, "N");
  EXPECT_EQ(p[3].type, Type::i64());
  EXPECT_EQ(p[5].name, "eps");
  EXPECT_EQ(p[5].kind, ParamKind::scalar);
  EXPECT_EQ(p[5].type, Type::f32());
  EXPECT_EQ(param_var(p[5]).as<Var>()->name, "eps");
}

TEST(IrDeathTest, MalformedNodesStopLoudly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Expr x = Var::make(Type::f32(), "x");
  EXPECT_DEATH(ivar("i") + x, "Binary operands differ in type");
  EXPECT_DEATH(Ramp::make(ivar("i"), i64(1), 3), "Ramp of 3 lanes");
  EXPECT_DEATH(For::make("i", i64(0), i32(4), ForKind::serial, Evaluate::make(x)),
               "bounds must be i64");
  EXPECT_DEATH(Call::make(MathFn::exp, {x, x}), "exp takes 1 arguments");
  EXPECT_DEATH(x % x, "Mod of type f32");
}

}  // namespace
}  // namespace kf::ir
