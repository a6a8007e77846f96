#include "task/formula.h"

#include <gtest/gtest.h>

namespace kf {
namespace {

TEST(Formula, IntegerArithmetic) {
  auto f = Formula::parse("(H + 2*P - R) / S + 1");
  ASSERT_TRUE(f) << f.error().message();
  auto v = f->eval_int({{"H", 32}, {"P", 1}, {"R", 3}, {"S", 2}});
  ASSERT_TRUE(v);
  EXPECT_EQ(*v, 16);  // (32 + 2 - 3) / 2 + 1 = 15 + 1, truncating
  EXPECT_EQ(f->names(), (std::set<std::string>{"H", "P", "R", "S"}));
}

TEST(Formula, Functions) {
  auto f = Formula::parse("min(M, 8) + max(N, 3) + ceildiv(K, 4) - M % 5");
  ASSERT_TRUE(f);
  EXPECT_EQ(*f->eval_int({{"M", 12}, {"N", 1}, {"K", 9}}), 8 + 3 + 3 - 2);
}

TEST(Formula, FloatEvaluation) {
  auto f = Formula::parse("2 * M * N / 3");
  ASSERT_TRUE(f);
  EXPECT_DOUBLE_EQ(*f->eval({{"M", 2}, {"N", 2}}), 8.0 / 3);
  EXPECT_EQ(*f->eval_int({{"M", 2}, {"N", 2}}), 2);  // integer division truncates
}

TEST(Formula, UnaryMinus) { EXPECT_EQ(*Formula::parse("-M + 10")->eval_int({{"M", 3}}), 7); }

TEST(Formula, ErrorsNameTheColumn) {
  auto f = Formula::parse("M * (N + ");
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().message(), "column 10: expected a number, a name or '('");
  auto g = Formula::parse("M $ N");
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().message(), "column 3: unexpected '$'");
  auto h = Formula::parse("sqrt(M)");
  ASSERT_FALSE(h);
  EXPECT_NE(h.error().message().find("unknown function 'sqrt'"), std::string::npos);
  auto k = Formula::parse("min(M)");
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().message().find("min takes 2 arguments"), std::string::npos);
}

TEST(Formula, EvaluationErrors) {
  auto f = Formula::parse("M / N");
  ASSERT_TRUE(f);
  auto z = f->eval_int({{"M", 1}, {"N", 0}});
  ASSERT_FALSE(z);
  EXPECT_EQ(z.error().message(), "division by zero");
  auto u = f->eval_int({{"M", 1}});
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().message(), "unknown name 'N'");
  auto frac = Formula::parse("M * 0.5")->eval_int({{"M", 3}});
  ASSERT_FALSE(frac);
  EXPECT_NE(frac.error().message().find("is not an integer"), std::string::npos);
}

}  // namespace
}  // namespace kf
