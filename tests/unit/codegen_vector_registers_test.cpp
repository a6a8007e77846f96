// Register promotion of stack buffers accessed only as whole vectors.
#include <gtest/gtest.h>

#include "codegen/vector_registers.h"
#include "unit/ir_test_kernels.h"

namespace kf {
namespace {

using namespace kf::ir;
using namespace kf::testing_ir;

int lanes_of(const Stmt& body, int64_t extent, MemoryKind m = MemoryKind::stack,
             Type t = Type::f32()) {
  Stmt s = Allocate::make("acc", t, i64(extent), m, body);
  return promotable_vector_lanes(*s.as<Allocate>());
}

Stmt store16(int64_t base, Expr pred = Expr()) {
  return Store::make("acc", Ramp::make(i64(base), i64(1), 16), make_zero(Type::f32(16)), pred);
}

TEST(VectorRegisters, DenseConstantAccessesArePromoted) {
  Stmt body = Block::make(
      {store16(0), store16(16),
       Store::make(
           "y", i64(0),
           VectorReduce::make(ReduceOp::add,
                              Load::make(Type::f32(16), "acc", Ramp::make(i64(16), i64(1), 16))))});
  EXPECT_EQ(lanes_of(body, 32), 16);
  EXPECT_EQ(lanes_of(store16(0, make_const(Type::boolean(16), 1)), 16), 16) << "predicates blend";
}

TEST(VectorRegisters, AnythingElseStaysInMemory) {
  EXPECT_EQ(lanes_of(store16(8), 32), 0) << "misaligned";
  EXPECT_EQ(lanes_of(store16(16), 16), 0) << "out of bounds";
  EXPECT_EQ(lanes_of(store16(0), 24), 0) << "extent not a multiple";
  EXPECT_EQ(lanes_of(store16(0), 16, MemoryKind::heap), 0);
  EXPECT_EQ(lanes_of(store16(0), 16, MemoryKind::stack, Type::bf16()), 0);
  EXPECT_EQ(lanes_of(Block::make({store16(0), Store::make("acc", i64(3), f32(1))}), 16), 0)
      << "a scalar access";
  EXPECT_EQ(
      lanes_of(Store::make("acc", Ramp::make(ivar("j"), i64(1), 16), make_zero(Type::f32(16))), 16),
      0)
      << "a variable offset";
  EXPECT_EQ(lanes_of(Store::make("y", i64(0), f32(0)), 16), 0) << "never used";
}

}  // namespace
}  // namespace kf
