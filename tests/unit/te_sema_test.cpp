// Semantic analysis: must-fail tests for every semantic error (each with its full text and
// position) and success cases for every language feature.
#include <gtest/gtest.h>

#include <string>

#include "te_test_tasks.h"

namespace kf::te {
namespace {

// The error compile_spec reports, and the prefix it must start with: "dir/task.toml:L:C: "
// where L is the task.toml line of spec line `line`.
void expect_error(const std::string& sig, const std::string& shapes, const std::string& spec,
                  int line, int col, const std::string& message) {
  Task t = te_task(sig, shapes, spec);
  auto p = compile_spec(t);
  ASSERT_FALSE(p) << "expected an error, got\n" << to_string(*p);
  EXPECT_EQ(p.error().message(), "dir/task.toml:" + std::to_string(t.te_line + line - 1) + ":" +
                                     std::to_string(col) + ": " + message);
}
void gemm_error(const std::string& spec, int line, int col, const std::string& message) {
  expect_error(kGemmSig, kGemmShapes, spec, line, col, message);
}

Program compiled(const std::string& sig, const std::string& shapes, const std::string& spec) {
  Task t = te_task(sig, shapes, spec);
  auto p = compile_spec(t);
  EXPECT_TRUE(p) << p.error().message();
  return p ? *p : Program{};
}

// --- must-fail -----------------------------------------------------------------------------

TEST(TeSemaErrors, UnknownTensor) {
  gemm_error("C[i, j] = sum(k: A[i, k] * Q[k, j])\n", 1, 28,
             "unknown tensor 'Q': expected an input, an output or an intermediate defined above");
}

TEST(TeSemaErrors, WrongNumberOfIndices) {
  gemm_error("C[i, j] = sum(k: A[i, k, j] * B[k, j])\n", 1, 18,
             "'A' has 2 dimensions: expected 2 indices, got 3");
  gemm_error("C[i, j] = ids[i, j]\n", 1, 11, "'ids' has 1 dimension: expected 1 index, got 2");
}

TEST(TeSemaErrors, OutputLeftHandSideRank) {
  gemm_error("C[i] = 1\n", 1, 1,
             "output 'C' has 2 dimensions: expected 2 indices on the left-hand side, got 1");
}

TEST(TeSemaErrors, ReductionVariableShapeMismatch) {
  gemm_error("C[i, j] = sum(k: A[i, k] * B[k, j] * ids[k])\n", 1, 42,
             "shape mismatch: 'k' indexes ids[k] (dimension 1 of ids) of extent M, but its range "
             "is 0..K from A[i, k] (dimension 2 of A)");
}

TEST(TeSemaErrors, OutputIndexShapeMismatch) {
  gemm_error("C[i, j] = A[i, j]\n", 1, 16,
             "shape mismatch: 'j' indexes A[i, j] (dimension 2 of A) of extent K, but its range "
             "is 0..N from the declared shape of output 'C'");
}

TEST(TeSemaErrors, IntermediateShapeMismatch) {
  gemm_error("t[k] = sum(i: A[i, k])\nC[i, j] = t[j]\n", 2, 13,
             "shape mismatch: 'j' indexes t[j] (dimension 1 of t) of extent K, but its range is "
             "0..N from the declared shape of output 'C'");
}

TEST(TeSemaErrors, UnboundIndex) {
  gemm_error("C[i, j] = A[i, k] * B[k, j]\n", 1, 16,
             "unbound name 'k': expected an index variable of the left-hand side, a reduction "
             "variable, a dim, a derived size or a scalar");
}

TEST(TeSemaErrors, RangeCannotBeInferred) {
  gemm_error("C[i, j] = sum(k: A[i, k + 1] else 0)\n", 1, 15,
             "cannot infer the range of the reduction variable 'k': use it as a whole index of a "
             "tensor (as in X[k]) or declare it as 'k in 0..N'");
  gemm_error("t[i] = 2 * alpha\nC[i, j] = t[i]\n", 1, 3,
             "cannot infer the range of the index 'i': use it as a whole index of a tensor (as "
             "in X[i]) or declare it as 'i in 0..N'");
}

TEST(TeSemaErrors, AssignToInput) {
  gemm_error("A[i, k] = 1\n", 1, 1,
             "'A' is an input: a statement may assign only an output or a new intermediate");
}

TEST(TeSemaErrors, AssignTwice) {
  gemm_error("C[i, j] = 1\n  C[i, j] = 2\n", 2, 3,
             "'C' is already defined at " +
                 std::to_string(te_task(kGemmSig, kGemmShapes, "").te_line) +
                 ":1: each tensor is assigned by one statement");
}

TEST(TeSemaErrors, AssignToDim) {
  gemm_error("M[i] = 1\nC[i, j] = 1\n", 1, 1, "'M' is a dim: expected a tensor name");
}

TEST(TeSemaErrors, IntermediateNeverUsed) {
  gemm_error("C[i, j] = 1\nt[i, k] = A[i, k]\n", 2, 1,
             "intermediate 't' is never used: expected it to feed an output (use or remove it)");
}

TEST(TeSemaErrors, OutputNeverAssigned) {
  const std::string sig = R"(dims = ["N"]
inputs = [ { name = "x", dtype = "f32", shape = ["N"] } ]
outputs = [ { name = "y", dtype = "f32", shape = ["N"] }, { name = "z", dtype = "f32", shape = ["N"] } ]
)";
  const std::string shapes = "bench = { N = 4 }\ntests = [ { N = 1 }, { N = 9 } ]\n";
  expect_error(sig, shapes, "y[i] = x[i]\n", 1, 1,
               "output 'z' is never assigned: expected a statement 'z[...] = ...'");
}

TEST(TeSemaErrors, ReadBeforeDefined) {
  gemm_error("C[i, j] = t[i, j]\nt[i, j] = 1\n", 1, 11,
             "'t' is read before it is defined; statements run in the order they are written");
}

TEST(TeSemaErrors, FloatUsedAsIndex) {
  gemm_error("C[i, j] = A[i, alpha]\n", 1, 16,
             "index 2 of 'A' expects an integer, got the float expression 'alpha'; convert with "
             "i64(...)");
  gemm_error("C[i, j] = A[i, B[0, j]]\n", 1, 16,
             "index 2 of 'A' expects an integer, got the float expression 'B[0, j]'; convert "
             "with i64(...)");
}

TEST(TeSemaErrors, ConditionUsedAsNumber) {
  gemm_error("C[i, j] = (A[i, 0] > 0) * 2\n", 1, 20,
             "'*' expects a number, got the condition '(A[i, 0] > 0)'");
  gemm_error("C[i, j] = i < j\n", 1, 13,
             "expected a number on the right-hand side, got the condition '(i < j)'; use "
             "select(cond, a, b)");
}

TEST(TeSemaErrors, NumberUsedAsCondition) {
  gemm_error("C[i, j] = select(A[i, 0], 1, 2)\n", 1, 18,
             "'select' expects a condition (a comparison), got the float expression 'A[i, 0]'");
  gemm_error("C[i, j] = select(i && j, 1, 2)\n", 1, 18,
             "'&&' expects a condition (a comparison), got the integer expression 'i'");
}

TEST(TeSemaErrors, CeildivNeedsIntegers) {
  gemm_error(
      "C[i, j] = ceildiv(alpha, 2)\n", 1, 19,
      "'ceildiv' expects an integer, got the float expression 'alpha'; convert with i64(...)");
}

TEST(TeSemaErrors, FloatAssignedToIntegerOutput) {
  const std::string sig = R"(dims = ["N", "E"]
inputs = [ { name = "g", dtype = "f32", shape = ["N", "E"] } ]
outputs = [ { name = "top", dtype = "i32", shape = ["N"] } ]
)";
  const std::string shapes =
      "bench = { N = 4, E = 3 }\ntests = [ { N = 1, E = 2 }, { N = 9, E = 3 } ]\n";
  expect_error(sig, shapes, "top[n] = max(e: g[n, e])\n", 1, 10,
               "output 'top' has dtype i32: expected an integer expression, got a float one; "
               "convert with i32(...)");
}

TEST(TeSemaErrors, TensorWithoutIndices) {
  gemm_error("C[i, j] = A\n", 1, 11, "'A' is a tensor: expected an access such as A[...]");
  gemm_error("C[i, j] = K[i]\n", 1, 11, "'K' is not a tensor: expected a name without '[...]'");
}

TEST(TeSemaErrors, VariableNames) {
  gemm_error("C[M, j] = 1\n", 1, 3, "'M' is a dim: an index variable needs a new name");
  gemm_error("C[i, i] = 1\n", 1, 6, "index variable 'i' appears twice on the left-hand side");
  gemm_error("C[i, j] = sum(i: A[i, 0])\n", 1, 15,
             "'i' is already an index variable of the left-hand side: a reduction variable needs "
             "a new name");
  gemm_error(
      "C[i, j] = sum(k, k: A[i, k])\n", 1, 18,
      "'k' is already an enclosing reduction variable: a reduction variable needs a new name");
  gemm_error("C[i, j] = sum(K: A[i, K])\n", 1, 15,
             "'K' is already a dim: a reduction variable needs a new name");
}

TEST(TeSemaErrors, ArgmaxTakesOneVariable) {
  gemm_error("C[i, j] = argmax(a, b: A[a, b])\n", 1, 11,
             "'argmax' takes exactly one variable, got 2");
}

TEST(TeSemaErrors, RangesOnTheLeftHandSide) {
  gemm_error("C[i in 0..M, j] = 1\n", 1, 3,
             "output 'C' takes its index ranges from its declared shape: remove 'in ...'");
  gemm_error("t[i in 1..M] = 1\nC[i, j] = t[i]\n", 1, 8,
             "a left-hand side range starts at 0: expected 'i in 0..N'");
  gemm_error("t[i in 0..ids[0]] = 1\nC[i, j] = t[i]\n", 1, 11,
             "expected a static size (literals, dims, derived sizes, scalars), got 'ids[0]'");
  gemm_error("t[i in 0..alpha] = 1\nC[i, j] = t[i]\n", 1, 11,
             "expected an integer size, got 'alpha'");
}

TEST(TeSemaErrors, RangeBoundsAreIntegers) {
  gemm_error("C[i, j] = sum(k in 0..alpha: A[i, k])\n", 1, 23,
             "the range of 'k' expects an integer, got the float expression 'alpha'; convert with "
             "i64(...)");
}

TEST(TeSemaErrors, Recurrences) {
  const std::string sig = R"(dims = ["T", "D"]
inputs = [ { name = "a", dtype = "f32", shape = ["T", "D"] } ]
outputs = [ { name = "h", dtype = "f32", shape = ["T", "D"] } ]
)";
  const std::string shapes =
      "bench = { T = 4, D = 3 }\ntests = [ { T = 1, D = 2 }, { T = 9, D = 3 } ]\n";
  expect_error(sig, shapes, "h[t, d] = a[t, d] + h[t - 1, d]\n", 1, 21,
               "a recurrence read needs a value for the first elements: expected 'h[(t - 1), d] "
               "else 0' (or another value)");
  expect_error(sig, shapes, "h[t, d] = a[t, d] + (h[t + 1, d] else 0)\n", 1, 26,
               "a recurrence reads its own earlier elements only as h[..., t - C, ...]: every "
               "index the left-hand side's variable in its position, one of them minus a "
               "positive integer constant");
  expect_error(sig, shapes, "h[t, d] = a[t, d] + (h[t - 1, d - 1] else 0)\n", 1, 33,
               "a recurrence reads its own earlier elements only as h[..., t - C, ...]: every "
               "index the left-hand side's variable in its position, one of them minus a "
               "positive integer constant");
  expect_error(sig, shapes, "h[t, d] = a[t, d] + (h[t, d] else 0)\n", 1, 22,
               "'h' reads the element it defines: a recurrence reads an earlier element such as "
               "h[t - 1, ...]");
  expect_error(sig, shapes, "h[t, d] = (h[t - 1, d] else 0) + (h[t, d - 1] else 0) + a[t, d]\n", 1,
               35, "'h' reads itself along two dimensions (t and d): expected one");
}

// --- success: every feature -----------------------------------------------------------------

TEST(TeSema, GemmProgram) {
  Program p = compiled(kGemmSig, kGemmShapes, "C[i, j] = alpha * sum(k: A[i, k] * B[k, j])\n");
  EXPECT_EQ(to_string(p),
            "C[i in 0..M, j in 0..N] : float -> output 0\n"
            "  = (alpha * sum(k in 0..K: (A[i, k] * B[k, j])))\n");
  const Stage& s = p.stages[0];
  EXPECT_EQ(s.reduce_vars.size(), 1u);
  EXPECT_EQ(s.body.args[1].rvars, std::vector<int>{0});
  EXPECT_EQ(s.body.args[0].ref.kind, RefKind::scalar);
  const Expr& a = s.body.args[1].args[0].args[0];
  EXPECT_EQ(a.ref.kind, RefKind::input);
  EXPECT_EQ(a.args[1].ref.kind, RefKind::reduce_var);
  EXPECT_EQ(a.args[0].ref.kind, RefKind::index_var);
  EXPECT_EQ(a.type, ValueType::f64);
}

TEST(TeSema, SoftmaxStagesAndInferredIntermediateShapes) {
  Program p = compiled(kRowsSig, kRowsShapes,
                       "m[n]    = max(d: X[n, d])\n"
                       "e[n, d] = exp(X[n, d] - m[n])\n"
                       "Y[n, d] = e[n, d] / sum(d2: e[n, d2])\n");
  EXPECT_EQ(to_string(p),
            "m[n in 0..N] : float\n"
            "  = max(d in 0..D: X[n, d])\n"
            "e[n in 0..N, d in 0..D] : float\n"
            "  = exp((X[n, d] - m[n]))\n"
            "Y[n in 0..N, d in 0..D] : float -> output 0\n"
            "  = (e[n, d] / sum(d2 in 0..D: e[n, d2]))\n");
  EXPECT_EQ(p.stages[2].body.args[0].ref.kind, RefKind::stage);
  EXPECT_EQ(p.stages[2].body.args[0].ref.index, 1);
  EXPECT_EQ(p.output_stage, std::vector<int>{2});
}

TEST(TeSema, RmsnormWithScalarAndDim) {
  Program p = compiled(kRowsSig, kRowsShapes,
                       "ms[n] = sum(d: X[n, d] * X[n, d]) / D\n"
                       "Y[n, d] = X[n, d] * rsqrt(ms[n] + eps) * w[d]\n");
  EXPECT_EQ(p.stages[0].type, ValueType::f64);
  EXPECT_EQ(p.stages[0].body.args[1].ref.kind, RefKind::dim);
}

TEST(TeSema, LayerNormAndLogsumexp) {
  compiled(kRowsSig, kRowsShapes,
           "mu[n] = sum(d: X[n, d]) / D\n"
           "var[n] = sum(d: (X[n, d] - mu[n]) * (X[n, d] - mu[n])) / D\n"
           "Y[n, d] = (X[n, d] - mu[n]) / sqrt(var[n] + eps) * w[d]\n");
  compiled(kRowsSig, kRowsShapes,
           "m[n] = max(d: X[n, d])\n"
           "Y[n, d] = X[n, d] - (m[n] + log(sum(d2: exp(X[n, d2] - m[n]))))\n");
}

const std::string kConvSig = R"(dims = ["N", "C", "H", "W", "K", "R", "S"]
derived = { P = "(H + 2 * pad - R) / stride + 1", Q = "(W + 2 * pad - S) / stride + 1" }
inputs = [
  { name = "x", dtype = "f32", shape = ["N", "C", "H", "W"] },
  { name = "w", dtype = "f32", shape = ["K", "C", "R", "S"] },
]
outputs = [ { name = "y", dtype = "f32", shape = ["N", "K", "P", "Q"] } ]
scalars = [ { name = "stride", dtype = "i64", default = 2 }, { name = "pad", dtype = "i64", default = 1 } ]
)";
const std::string kConvShapes = R"(bench = { N = 1, C = 2, H = 5, W = 5, K = 2, R = 3, S = 3 }
tests = [ { N = 1, C = 1, H = 3, W = 3, K = 1, R = 1, S = 1 }, { N = 2, C = 3, H = 9, W = 7, K = 2, R = 3, S = 3 } ]
)";

TEST(TeSema, ConvWithStrideAndPadding) {
  Program p = compiled(kConvSig, kConvShapes,
                       "y[n, k, p, q] = sum(c, r, s: x[n, c, p * stride + r - pad, q * stride + "
                       "s - pad] else 0 * w[k, c, r, s])\n");
  const Stage& s = p.stages[0];
  ASSERT_EQ(s.reduce_vars.size(), 3u);
  EXPECT_EQ(to_string(s.reduce_vars[1].hi), "R");  // inferred from w, not from the padded x
  EXPECT_EQ(to_string(s.vars[2].hi), "P");
}

TEST(TeSema, TransposedConvAndMaxPool) {
  // y[h] gathers x[(h + pad - r) / stride] where the division is exact.
  const std::string sig = R"(dims = ["N", "H", "R", "OH"]
inputs = [ { name = "x", dtype = "f32", shape = ["N", "H"] }, { name = "w", dtype = "f32", shape = ["R"] } ]
outputs = [ { name = "y", dtype = "f32", shape = ["N", "OH"] } ]
scalars = [ { name = "stride", dtype = "i64", default = 2 }, { name = "pad", dtype = "i64", default = 0 } ]
)";
  const std::string shapes =
      "bench = { N = 1, H = 3, R = 3, OH = 7 }\n"
      "tests = [ { N = 1, H = 1, R = 1, OH = 1 }, { N = 2, H = 9, R = 3, OH = 19 } ]\n";
  compiled(sig, shapes,
           "y[n, h] = sum(r: select((h + pad - r) % stride == 0,\n"
           "                        x[n, (h + pad - r) / stride] else 0, 0) * w[r])\n");
  compiled(sig, shapes, "y[n, h] = max(r in 0..R: x[n, h * stride + r - pad] else -inf)\n");
}

const std::string kAttnSig = R"(dims = ["B", "H", "KV", "T", "S", "E"]
inputs = [
  { name = "q", dtype = "f32", shape = ["B", "H", "T", "E"] },
  { name = "k", dtype = "f32", shape = ["B", "KV", "S", "E"] },
  { name = "v", dtype = "f32", shape = ["B", "KV", "S", "E"] },
  { name = "lens", dtype = "i32", shape = ["B"], dist = { kind = "randint", lo = 1, hi = "S + 1" } },
]
outputs = [ { name = "o", dtype = "f32", shape = ["B", "H", "T", "E"] } ]
scalars = [ { name = "scale", dtype = "f32", default = 0.5 }, { name = "window", dtype = "i64", default = 2 } ]
)";
const std::string kAttnShapes = R"(bench = { B = 1, H = 4, KV = 2, T = 3, S = 3, E = 2 }
tests = [ { B = 1, H = 1, KV = 1, T = 1, S = 1, E = 1 }, { B = 2, H = 4, KV = 2, T = 9, S = 9, E = 3 } ]
)";

TEST(TeSema, CausalSlidingWindowGqaAttention) {
  Program p = compiled(kAttnSig, kAttnShapes,
                       "s[b, h, t, j] = select(j <= t && j > t - window && j < lens[b],\n"
                       "    scale * sum(e: q[b, h, t, e] * k[b, h / (H / KV), j, e]), -inf)\n"
                       "m[b, h, t] = max(j: s[b, h, t, j])\n"
                       "p[b, h, t, j] = exp(s[b, h, t, j] - m[b, h, t])\n"
                       "o[b, h, t, e] = sum(j: p[b, h, t, j] * v[b, h / (H / KV), j, e]) / "
                       "sum(j: p[b, h, t, j])\n");
  EXPECT_EQ(to_string(p.stages[0].vars[3].hi), "S");  // j: from k's dimension 3
  EXPECT_EQ(to_string(p.stages[0].vars[1].hi), "H");  // h: from q (k's index is h / (H / KV))
}

TEST(TeSema, PagedAttentionThroughAPageTable) {
  const std::string sig = R"(dims = ["B", "T", "PS", "NP", "MP", "E"]
inputs = [
  { name = "q", dtype = "f32", shape = ["B", "E"] },
  { name = "kc", dtype = "f32", shape = ["NP", "PS", "E"] },
  { name = "table", dtype = "i32", shape = ["B", "MP"], dist = { kind = "randint", hi = "NP" } },
  { name = "lens", dtype = "i32", shape = ["B"], dist = { kind = "randint", hi = "T" } },
]
outputs = [ { name = "s", dtype = "f32", shape = ["B", "T"] } ]
)";
  const std::string shapes =
      "bench = { B = 1, T = 4, PS = 2, NP = 3, MP = 2, E = 2 }\n"
      "tests = [ { B = 1, T = 1, PS = 1, NP = 1, MP = 1, E = 1 }, "
      "{ B = 2, T = 9, PS = 3, NP = 5, MP = 3, E = 2 } ]\n";
  Program p = compiled(sig, shapes,
                       "s[b, t] = select(t < lens[b],\n"
                       "  sum(e: q[b, e] * kc[table[b, t / PS], t % PS, e]), -inf)\n");
  EXPECT_EQ(p.stages[0].reduce_vars[0].is_static, true);
}

const std::string kMoeSig = R"(dims = ["Tk", "E", "D"]
inputs = [
  { name = "x", dtype = "f32", shape = ["Tk", "D"] },
  { name = "g", dtype = "f32", shape = ["Tk", "E"] },
  { name = "W", dtype = "f32", shape = ["E", "D", "D"] },
]
outputs = [ { name = "y", dtype = "f32", shape = ["Tk", "D"] }, { name = "top", dtype = "i32", shape = ["Tk"] } ]
)";
const std::string kMoeShapes =
    "bench = { Tk = 2, E = 3, D = 2 }\n"
    "tests = [ { Tk = 1, E = 1, D = 1 }, { Tk = 9, E = 4, D = 3 } ]\n";
const std::string kMoeSpec =
    "top[t] = i32(argmax(e: g[t, e]))\n"
    "second[t] = argmax(e: select(e == top[t], -inf, g[t, e]))\n"
    "y[t, d] = sum(c: x[t, c] * (W[top[t], c, d] + W[second[t], c, d]))\n";

TEST(TeSema, MoeTopTwoRoutingWithArgmax) {
  Program p = compiled(kMoeSig, kMoeShapes, kMoeSpec);
  EXPECT_EQ(p.stages[0].type, ValueType::i64);
  EXPECT_EQ(p.stages[1].type, ValueType::i64);  // an integer intermediate
  EXPECT_EQ(p.output_stage, (std::vector<int>{2, 0}));
}

const std::string kScanSig = R"(dims = ["T", "D"]
inputs = [ { name = "a", dtype = "f32", shape = ["T", "D"] }, { name = "x", dtype = "f32", shape = ["T", "D"] } ]
outputs = [ { name = "h", dtype = "f32", shape = ["T", "D"] } ]
)";
const std::string kScanShapes =
    "bench = { T = 4, D = 3 }\ntests = [ { T = 1, D = 2 }, { T = 9, D = 3 } ]\n";

TEST(TeSema, RecurrencesAndCumulativeSums) {
  Program p =
      compiled(kScanSig, kScanShapes, "h[t, d] = a[t, d] * (h[t - 1, d] else 0) + x[t, d]\n");
  EXPECT_EQ(p.stages[0].scan_dim, 0);
  EXPECT_EQ(to_string(p),
            "h[t in 0..T, d in 0..D] : float -> output 0 scan t\n"
            "  = ((a[t, d] * (h[(t - 1), d] else 0)) + x[t, d])\n");
  Program c = compiled(kScanSig, kScanShapes, "h[t, d] = sum(u in 0..t + 1: x[u, d])\n");
  EXPECT_FALSE(c.stages[0].reduce_vars[0].is_static);
  EXPECT_EQ(c.stages[0].scan_dim, -1);
  Program r = compiled(kScanSig, kScanShapes, "h[t, d] = (h[t, d - 2] else 1) * x[t, d]\n");
  EXPECT_EQ(r.stages[0].scan_dim, 1);
}

TEST(TeSema, GatherAndRaggedGroups) {
  const std::string sig = R"(dims = ["Tk", "V", "D", "G", "R"]
inputs = [
  { name = "Emb", dtype = "f32", shape = ["V", "D"] },
  { name = "ids", dtype = "i64", shape = ["Tk"], dist = { kind = "randint", hi = "V" } },
  { name = "rows", dtype = "f32", shape = ["R", "D"] },
  { name = "offs", dtype = "i32", shape = ["G + 1"], dist = { kind = "offsets", total = "R" } },
]
outputs = [ { name = "y", dtype = "f32", shape = ["Tk", "D"] }, { name = "gs", dtype = "f32", shape = ["G", "D"] } ]
)";
  const std::string shapes =
      "bench = { Tk = 2, V = 3, D = 2, G = 2, R = 4 }\n"
      "tests = [ { Tk = 1, V = 1, D = 1, G = 1, R = 1 }, "
      "{ Tk = 9, V = 5, D = 3, G = 3, R = 10 } ]\n";
  Program p = compiled(sig, shapes,
                       "y[t, d] = Emb[ids[t], d]\n"
                       "gs[g, d] = sum(r in offs[g]..offs[g + 1]: rows[r, d])\n");
  EXPECT_EQ(p.stages[0].body.args[0].args[0].type, ValueType::i64);
  EXPECT_FALSE(p.stages[1].reduce_vars[0].is_static);
}

TEST(TeSema, RaggedMaskAndCasts) {
  Program p = compiled(kRowsSig, kRowsShapes,
                       "Y[n, d] = select(d < lens[n], X[n, d], 0) + f32(lens[n]) / f64(D) + "
                       "i64(X[n, d]) % 2 + abs(floor(X[n, d])) + pow(w[d], 2)\n");
  EXPECT_EQ(p.stages[0].type, ValueType::f64);
}

TEST(TeSema, ExplicitRangesMayReadOuterVariables) {
  Program p = compiled(kRowsSig, kRowsShapes, "Y[n, d] = sum(i in 0..n + 1, j in i..D: X[i, j])\n");
  const Stage& s = p.stages[0];
  EXPECT_EQ(s.reduce_vars[1].lo.ref.kind, RefKind::reduce_var);
  EXPECT_EQ(to_string(s.body, &s), "sum(i in 0..(n + 1), j in i..D: X[i, j])");
}

TEST(TeSema, DerivedSizesAgreeWithTheirFormulas) {
  // r's uses: b (extent H - R + 1) and c (extent P, derived as H - R + 1) agree at every shape.
  const std::string sig = R"(dims = ["H", "R"]
derived = { P = "H - R + 1" }
inputs = [
  { name = "x", dtype = "f32", shape = ["H"] },
  { name = "b", dtype = "f32", shape = ["H - R + 1"] },
  { name = "c", dtype = "f32", shape = ["P"] },
]
outputs = [ { name = "y", dtype = "f32", shape = ["P"] } ]
)";
  const std::string shapes =
      "bench = { H = 4, R = 2 }\ntests = [ { H = 1, R = 1 }, { H = 9, R = 3 } ]\n";
  Program p = compiled(sig, shapes, "y[p] = sum(r: b[r] * c[r]) + x[p]\n");  // x: a prefix
  EXPECT_EQ(to_string(p.stages[0].reduce_vars[0].hi), "((H - R) + 1)");
  expect_error(sig, shapes, "y[p] = sum(r: b[r] * x[r])\n", 1, 24,
               "shape mismatch: 'r' indexes x[r] (dimension 1 of x) of extent H, but its range is "
               "0..((H - R) + 1) from b[r] (dimension 1 of b)");
  compiled(sig, shapes, "t[i] = x[i]\ny[p] = t[p]\n");  // y reads a prefix of t
}

}  // namespace
}  // namespace kf::te
