// The TE parser: golden tests (spec in, canonical AST text out) and must-fail tests, each
// checking the full error text with its line and column.
#include <gtest/gtest.h>

#include <string>

#include "te/parser.h"

namespace kf::te {
namespace {

// Parses `spec` as if its first line were line 10 of f.toml.
std::string printed(const std::string& spec) {
  auto ast = parse(spec, "f.toml", 10);
  EXPECT_TRUE(ast) << ast.error().message();
  return ast ? to_string(*ast) : "";
}

std::string error_of(const std::string& spec) {
  auto ast = parse(spec, "f.toml", 10);
  EXPECT_FALSE(ast) << "expected an error";
  return ast ? "" : ast.error().message();
}

TEST(TeParser, Gemm) {
  EXPECT_EQ(printed("C[i, j] = sum(k: A[i, k] * B[k, j])\n"),
            "C[i, j] = sum(k: (A[i, k] * B[k, j]))\n");
}

TEST(TeParser, SoftmaxStagesAndComments) {
  EXPECT_EQ(printed("# softmax over d\n"
                    "m[n]    = max(d: X[n, d])   # row max\n"
                    "e[n, d] = exp(X[n, d] - m[n])\n"
                    "Y[n, d] = e[n, d] / sum(d2: e[n, d2])\n"),
            "m[n] = max(d: X[n, d])\n"
            "e[n, d] = exp((X[n, d] - m[n]))\n"
            "Y[n, d] = (e[n, d] / sum(d2: e[n, d2]))\n");
}

TEST(TeParser, Precedence) {
  EXPECT_EQ(printed("y[i] = a[i] + b[i] * c[i] - d[i] / 2 % 3\n"),
            "y[i] = ((a[i] + (b[i] * c[i])) - ((d[i] / 2) % 3))\n");
  EXPECT_EQ(printed("y[i] = select(i < 2 || i >= N && !(i == 5), -x[i], -1.5)\n"),
            "y[i] = select(((i < 2) || ((i >= N) && (!(i == 5)))), (-x[i]), -1.5)\n");
  EXPECT_EQ(printed("y[i] = --x[i]\n"), "y[i] = (-(-x[i]))\n");
}

TEST(TeParser, Literals) {
  EXPECT_EQ(
      printed("y[i] = 2 + 2.0 + 1e-6 + .5 + 3. + inf + -inf + -4\n"),
      "y[i] = (((((((2 + 2.0) + 9.9999999999999995e-07) + 0.5) + 3.0) + inf) + -inf) + -4)\n");
}

TEST(TeParser, FunctionsAndCasts) {
  EXPECT_EQ(printed("y[i] = max(x[i], 0) + min(a, b) + pow(x[i], 2) + ceildiv(N, 4)\n"),
            "y[i] = (((max(x[i], 0) + min(a, b)) + pow(x[i], 2)) + ceildiv(N, 4))\n");
  EXPECT_EQ(printed("y[i] = f32(ids[i]) + i64(x[i]) + bf16(x[i]) + sigmoid(rsqrt(x[i]))\n"),
            "y[i] = (((f32(ids[i]) + i64(x[i])) + bf16(x[i])) + sigmoid(rsqrt(x[i])))\n");
}

TEST(TeParser, ReductionsWithRangesAndSeveralVariables) {
  EXPECT_EQ(printed("y[n, k] = sum(c, r in 0..R, s in 1..S + 1: x[n, c, r, s])\n"),
            "y[n, k] = sum(c, r in 0..R, s in 1..(S + 1): x[n, c, r, s])\n");
  EXPECT_EQ(printed("y[i] = argmax(j: x[i, j]) + prod(j: x[i, j]) + min(j in 0..i + 1: x[i, j])\n"),
            "y[i] = ((argmax(j: x[i, j]) + prod(j: x[i, j])) + min(j in 0..(i + 1): x[i, j]))\n");
}

TEST(TeParser, ElseValuesAndDataDependentIndices) {
  EXPECT_EQ(printed("y[n, h] = sum(r: x[n, h * S + r - P] else 0 * w[r])\n"),
            "y[n, h] = sum(r: ((x[n, (((h * S) + r) - P)] else 0) * w[r]))\n");
  EXPECT_EQ(printed("h[t, d] = a[t, d] * (h[t - 1, d] else -inf) + E[ids[t], d]\n"),
            "h[t, d] = ((a[t, d] * (h[(t - 1), d] else -inf)) + E[ids[t], d])\n");
}

TEST(TeParser, LeftHandSideRangesAndScalarTensors) {
  EXPECT_EQ(printed("z[p in 0..P, q] = 1\ns[] = sum(i: x[i])\n"),
            "z[p in 0..P, q] = 1\ns[] = sum(i: x[i])\n");
}

TEST(TeParser, StatementsMaySpanLines) {
  EXPECT_EQ(printed("y[i] = a[i] +\n       b[i]\nz[i] = (a[i]\n  * 2)\n"),
            "y[i] = (a[i] + b[i])\nz[i] = (a[i] * 2)\n");
}

TEST(TeParser, PositionsAreTaskFileLines) {
  auto ast = parse("\n  C[i] = A[i]\n", "f.toml", 10);
  ASSERT_TRUE(ast);
  EXPECT_EQ(ast->statements[0].loc.line, 11);
  EXPECT_EQ(ast->statements[0].loc.col, 3);
  EXPECT_EQ(ast->statements[0].body.loc.col, 10);
  EXPECT_EQ(ast->start.line, 10);
}

TEST(TeParser, EmptySpecHasNoStatements) {
  EXPECT_EQ(printed("# nothing\n"), "");
}

TEST(TeParserErrors, UnexpectedCharacter) {
  EXPECT_EQ(error_of("C[i] = A[i] @ B[i]\n"), "f.toml:10:13: unexpected character '@'");
}

TEST(TeParserErrors, MissingAssign) {
  EXPECT_EQ(error_of("C[i] A[i]\n"), "f.toml:10:6: expected '=' after the left-hand side, got 'A'");
}

TEST(TeParserErrors, MissingBracketAfterTarget) {
  EXPECT_EQ(error_of("C = A\n"), "f.toml:10:3: expected '[' after the tensor name 'C', got '='");
}

TEST(TeParserErrors, StatementMustStartWithTensor) {
  EXPECT_EQ(error_of("\n3 = A[i]\n"),
            "f.toml:11:1: expected a tensor name starting a statement such as 'C[i, j] = ...', "
            "got '3'");
}

TEST(TeParserErrors, UnclosedIndexList) {
  EXPECT_EQ(error_of("C[i] = A[i, j\n"),
            "f.toml:11:1: expected ',' or ']' after an index of 'A', got the end of the spec");
}

TEST(TeParserErrors, TwoExpressionsOnALine) {
  EXPECT_EQ(error_of("C[i] = A[i] B[i]\n"),
            "f.toml:10:13: expected an operator or the end of the line, got 'B'");
}

TEST(TeParserErrors, MissingExpression) {
  EXPECT_EQ(error_of("C[i] = A[i] *\n"),
            "f.toml:11:1: expected an expression, got the end of the spec");
  EXPECT_EQ(error_of("C[i] = ]\n"), "f.toml:10:8: expected an expression, got ']'");
}

TEST(TeParserErrors, UnknownFunction) {
  EXPECT_EQ(error_of("C[i] = gelu(A[i])\n"),
            "f.toml:10:8: unknown function 'gelu'; expected one of exp log sqrt rsqrt tanh erf "
            "sigmoid abs floor ceil min max pow ceildiv select f32 f64 bf16 i32 i64, or a "
            "reduction sum prod max min argmax argmin");
}

TEST(TeParserErrors, WrongArity) {
  EXPECT_EQ(error_of("C[i] = exp(A[i], 2)\n"), "f.toml:10:8: 'exp' expects 1 argument, got 2");
  EXPECT_EQ(error_of("C[i] = select(A[i] > 0, 1)\n"),
            "f.toml:10:8: 'select' expects 3 arguments, got 2");
}

TEST(TeParserErrors, ReductionNeedsColon) {
  EXPECT_EQ(error_of("C[i] = sum(k A[i, k])\n"),
            "f.toml:10:14: expected ',' or ':' after the reduction variables of 'sum', got 'A'");
  EXPECT_EQ(error_of("C[i] = sum(A[i, k])\n"),
            "f.toml:10:12: expected a reduction variable name in 'sum(VARS: BODY)', got 'A'");
}

TEST(TeParserErrors, ReductionNotClosed) {
  EXPECT_EQ(error_of("C[i] = sum(k: A[i, k]\n"),
            "f.toml:11:1: expected ')' closing 'sum(', got the end of the spec");
}

TEST(TeParserErrors, BadRange) {
  EXPECT_EQ(error_of("C[i] = sum(k in 0, K: A[i, k])\n"),
            "f.toml:10:18: expected '..' in the range 'LO..HI' of 'k', got ','");
}

TEST(TeParserErrors, ComparisonsDoNotChain) {
  EXPECT_EQ(error_of("C[i] = select(0 < i < 3, 1, 2)\n"),
            "f.toml:10:21: expected parentheses: comparisons do not chain, got '<'");
}

TEST(TeParserErrors, NumberFollowedByName) {
  EXPECT_EQ(error_of("C[i] = 2x[i]\n"),
            "f.toml:10:9: expected an operator after the number '2', got 'x'");
}

TEST(TeParserErrors, ReservedWordAsName) {
  EXPECT_EQ(error_of("C[in] = 1\n"), "f.toml:10:3: expected an index variable name, got 'in'");
}

// Must-fail: the spec is untrusted text. Each of these overflowed the parser's stack (or, past
// the parser, the checker's and lowering's) before the height limit.
TEST(TeParserErrors, DeepNestingIsRefused) {
  const std::string msg =
      "the expression nests deeper than 256 levels (parentheses, operators, calls)";
  const int n = 50000;
  EXPECT_EQ(error_of("y[i] = " + std::string(n, '(') + "x[i]" + std::string(n, ')')),
            "f.toml:10:264: " + msg);
  EXPECT_EQ(error_of("y[i] = " + std::string(n, '-') + "x[i]"), "f.toml:10:264: " + msg);
  EXPECT_EQ(error_of("y[i] = " + std::string(n, '!') + "x[i]"), "f.toml:10:264: " + msg);
  std::string chain = "y[i] = x[i]";
  for (int k = 0; k < n; ++k) chain += " + x[i]";
  EXPECT_NE(error_of(chain).find(msg), std::string::npos);
  std::string calls = "x[i]", accesses = "0", sums = "x[i]";
  for (int k = 0; k < 300; ++k) {
    calls = "exp(" + calls + ")";
    accesses = "x[" + accesses + "]";
    sums = "sum(k" + std::to_string(k) + ": " + sums + ")";
  }
  EXPECT_NE(error_of("y[i] = " + calls).find(msg), std::string::npos);
  EXPECT_NE(error_of("y[i] = " + accesses).find(msg), std::string::npos);
  EXPECT_NE(error_of("y[i] = " + sums).find(msg), std::string::npos);
  // 200 levels are fine.
  std::string ok = "x[i]";
  for (int k = 0; k < 200; ++k) ok = "(" + ok + " + 1)";
  EXPECT_FALSE(printed("y[i] = " + ok).empty());
}

TEST(TeParserErrors, NumbersOutOfRange) {
  EXPECT_EQ(error_of("y[i] = x[i] * 1e999"), "f.toml:10:15: number '1e999' is out of range");
  EXPECT_EQ(error_of("y[i] = x[i] * 1e-999"), "f.toml:10:15: number '1e-999' is out of range");
  EXPECT_EQ(error_of("y[i] = x[i] + 99999999999999999999"),
            "f.toml:10:15: integer '99999999999999999999' is larger than 2^53 (9007199254740992)");
  EXPECT_FALSE(printed("y[i] = x[i] + 9007199254740992 + inf").empty());
}

TEST(TeParserErrors, SizesBeyondTheLimitsAreRefused) {
  // 20,000 statements took the checker 90 s and 100,000 reduction variables 111 s (quadratic).
  std::string many;
  for (int k = 0; k < 300; ++k) many += "t" + std::to_string(k) + "[i] = x[i]\n";
  EXPECT_EQ(error_of(many), "f.toml:266:1: a spec has at most 256 statements");
  std::string vars = "k0";
  for (int k = 1; k < 20; ++k) vars += ", k" + std::to_string(k);
  EXPECT_EQ(error_of("y[i] = sum(" + vars + ": x[k0])"),
            "f.toml:10:85: at most 16 variables in a reduction are allowed");
  EXPECT_EQ(error_of("y[" + vars + "] = 1"),
            "f.toml:10:76: at most 16 index variables on a left-hand side are allowed");
  EXPECT_EQ(error_of("y[i] = x[" + vars + "]"),
            "f.toml:10:83: at most 16 indices in an access are allowed");
}

TEST(TeParserErrors, LongTokensAreQuotedShortly) {
  const std::string name(100000, 'n');
  EXPECT_EQ(error_of("y[i] = x[i] " + name),
            "f.toml:10:13: name '" + std::string(80, 'n') + "...' is longer than 128 characters");
  const std::string number(100000, '9');
  EXPECT_EQ(error_of("y[i] = x[i] " + number),
            "f.toml:10:13: number '" + std::string(80, '9') + "...' is out of range");
  const std::string longest(128, 'n');
  EXPECT_EQ(printed("y[i] = x[i] + " + longest + "[i]"), "y[i] = (x[i] + " + longest + "[i])\n")
      << "128 characters are a name";
}

TEST(ParseExpression, WholeTextIsOneExpression) {
  auto e = parse_expression("(H + 2*P - R) / S + 1", "<f>", 1);
  ASSERT_TRUE(e);
  EXPECT_EQ(to_string(*e), "((((H + (2 * P)) - R) / S) + 1)");
  auto bad = parse_expression("H H", "<f>", 1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(),
            "<f>:1:3: expected an operator or the end of the expression, got 'H'");
}

}  // namespace
}  // namespace kf::te
