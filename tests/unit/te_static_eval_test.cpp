// Static evaluation of sizes at a shape.
#include <gtest/gtest.h>

#include "te/static_eval.h"
#include "te_test_tasks.h"

namespace kf::te {
namespace {

TEST(TeStaticEval, InferredExtentsEvaluateAtAShape) {
  Task t = te_task(kGemmSig, kGemmShapes, "C[i, j] = sum(k: A[i, k] * B[k, j])\n");
  auto p = compile_spec(t);
  ASSERT_TRUE(p);
  const Stage& s = p->stages[0];
  const Bindings env{{"M", 3}, {"N", 9}, {"K", 2}};
  EXPECT_TRUE(is_static(s.vars[1].hi));
  EXPECT_EQ(*eval_static_int(s.vars[1].hi, env), 9);
  EXPECT_EQ(*eval_static_int(s.reduce_vars[0].hi, env), 2);
  EXPECT_FALSE(is_static(s.body));
  EXPECT_FALSE(eval_static(s.body, env));
}

TEST(TeStaticEval, ArithmeticFollowsTheTypes) {
  Task t =
      te_task(kGemmSig, kGemmShapes,
              "t[i in 0..(M + 2 * N - K) / 2 + ceildiv(K, 2) % 2] = 1\nC[i, j] = t[i] else 0\n");
  auto p = compile_spec(t);
  ASSERT_TRUE(p) << p.error().message();
  const Expr& hi = p->stages[0].vars[0].hi;
  EXPECT_EQ(*eval_static_int(hi, {{"M", 3}, {"N", 9}, {"K", 2}}), (3 + 18 - 2) / 2 + 1 % 2);
  auto missing = eval_static(hi, {{"M", 3}});
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "'N' has no value at this shape");
}

}  // namespace
}  // namespace kf::te
