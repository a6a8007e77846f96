#include "task/formula.h"

#include <gtest/gtest.h>

#include <cmath>

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

TEST(Formula, UnaryMinus) {
  EXPECT_EQ(*Formula::parse("-M + 10")->eval_int({{"M", 3}}), 7);
}

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

// Must-fail: formulas are untrusted text (task.toml); each of these once threw or overflowed the
// stack.
std::string parse_error(const std::string& text) {
  auto f = Formula::parse(text);
  return f ? "(parsed)" : f.error().message();
}

TEST(Formula, MalformedNumbersAreErrors) {
  EXPECT_EQ(parse_error("."), "column 1: malformed number '.' (a number needs a digit)");
  EXPECT_EQ(parse_error("2 * .e5"), "column 5: malformed number '.' (a number needs a digit)");
  EXPECT_EQ(parse_error("1e999 * N"), "column 1: number '1e999' is out of range");
  EXPECT_EQ(parse_error("M * 1e-400"), "column 5: number '1e-400' is out of range");
  EXPECT_EQ(parse_error("0x10"), "column 2: unexpected 'x'");  // decimal only
  EXPECT_EQ(*Formula::parse("2.5e1 + .5 + 3.")->eval({}), 25 + 0.5 + 3);
}

TEST(Formula, DeepNestingIsRefused) {
  const std::string msg = "the formula nests deeper than 100 levels";
  for (int n : {101, 100000}) {
    const std::string e = parse_error(std::string(n, '(') + "M" + std::string(n, ')'));
    EXPECT_NE(e.find(msg), std::string::npos) << e;
    EXPECT_NE(parse_error(std::string(n, '-') + "M").find(msg), std::string::npos);
    std::string chain = "1";
    for (int i = 0; i < n; ++i) chain += " + 1";
    EXPECT_NE(parse_error(chain).find(msg), std::string::npos);
    std::string calls = "M";
    for (int i = 0; i < std::min(n, 2000); ++i) calls = "min(" + calls + ", 1)";
    EXPECT_NE(parse_error(calls).find(msg), std::string::npos);
  }
  EXPECT_EQ(
      *Formula::parse(std::string(40, '(') + "M" + std::string(40, ')'))->eval_int({{"M", 4}}), 4);
}

TEST(Formula, OverflowIsAnErrorNotInfinity) {
  auto f = Formula::parse("M * M * M");
  ASSERT_TRUE(f);
  auto v = f->eval({{"M", 1e200}});
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().message(), "'M * M * M' overflows (a value beyond 1e308)");
  auto i = f->eval_int({{"M", 1e6}});
  ASSERT_FALSE(i);
  EXPECT_EQ(i.error().message(),
            "'M * M * M' exceeds 2^53 (9007199254740992) in integer arithmetic");
  // The product exceeds 2^53 before the division brings it back: refused, not rounded.
  auto g = Formula::parse("M * M / M");
  EXPECT_FALSE(g->eval_int({{"M", 1e8}}));
  EXPECT_EQ(*g->eval_int({{"M", 1e4}}), 10000);
  auto nan = f->eval({{"M", std::nan("")}});
  ASSERT_FALSE(nan);
  EXPECT_EQ(nan.error().message(), "'M' is not a finite number");
  EXPECT_FALSE(Formula::parse("1 % 0")->eval({}));
  EXPECT_FALSE(Formula::parse("ceildiv(1, 0)")->eval({}));
}

}  // namespace
}  // namespace kf
