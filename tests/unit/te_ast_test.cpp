// The AST helpers: operator names and arities, the printer, the visitor.
#include <gtest/gtest.h>

#include <string>

#include "te/parser.h"

namespace kf::te {
namespace {

TEST(TeAst, OperatorTable) {
  EXPECT_EQ(op_arity(Op::neg), 1);
  EXPECT_EQ(op_arity(Op::pow), 2);
  EXPECT_EQ(op_arity(Op::select), 3);
  EXPECT_EQ(op_name(Op::logical_and), "&&");
  EXPECT_EQ(op_name(Op::rsqrt), "rsqrt");
  EXPECT_EQ(reduce_name(ReduceOp::argmin), "argmin");
  EXPECT_EQ(value_type_name(ValueType::boolean), "condition");
}

TEST(TeAst, PrinterRoundTrips) {
  // Printing and re-parsing gives the same text.
  for (const std::string spec :
       {"y[i] = select(((i < 2) || (!(i == 3))), (-x[i]), -inf)\n",
        "y[n, h] = sum(r in 0..R: ((x[n, ((h * S) + r)] else 0.5) * w[r]))\n",
        "y[i] = (f32(i) + bf16(x[i]))\n", "s[] = argmax(k: x[k])\n"}) {
    auto a = parse(spec, "f", 1);
    ASSERT_TRUE(a) << a.error().message();
    const std::string once = to_string(*a);
    EXPECT_EQ(once, spec);
    auto b = parse(once, "f", 1);
    ASSERT_TRUE(b);
    EXPECT_EQ(to_string(*b), once);
  }
}

TEST(TeAst, VisitWalksEverySubexpression) {
  auto e = parse_expression("sum(k: A[i, k] * (B[k, j] else 2))", "f", 1);
  ASSERT_TRUE(e);
  std::string seen;
  visit(*e, [&](const Expr& x) {
    if (x.kind == ExprKind::access || x.kind == ExprKind::number) seen += to_string(x) + ";";
  });
  EXPECT_EQ(seen, "A[i, k];(B[k, j] else 2);2;");
  EXPECT_EQ(e->args[0].args[1].index_count(), 2u);
  visit_mut(*e, [](Expr& x) {
    if (x.kind == ExprKind::number) x.number = 3;
  });
  EXPECT_EQ(to_string(*e), "sum(k: (A[i, k] * (B[k, j] else 3)))");
}

}  // namespace
}  // namespace kf::te
