// Must-fail tests for the task loader: each malformed task.toml is refused with a message that
// names the file, the line and column, and what was expected. Also: every bundled task loads.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "task/task.h"

namespace kf {
namespace {

// A valid task; each must-fail case edits one thing.
const std::string kValid = R"(name = "t"
category = "gemm"
dtype = "f32"

[signature]
function = "gemm"
dims = ["M", "N", "K"]
inputs = [
  { name = "A", dtype = "f32", shape = ["M", "K"] },
  { name = "B", dtype = "f32", shape = ["K", "N"], dist = { kind = "uniform", lo = -1.0, hi = 1.0 } },
]
outputs = [ { name = "C", dtype = "f32", shape = ["M", "N"] } ]

[shapes]
bench = { M = 64, N = 64, K = 64 }
tests = [ { M = 1, N = 1, K = 1 }, { M = 17, N = 9, K = 3 } ]

[tolerance]
f32 = { rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }

[cost]
flops = "2 * M * N * K"
)";

std::string replace(std::string s, const std::string& from, const std::string& to) {
  auto p = s.find(from);
  EXPECT_NE(p, std::string::npos) << "test bug: '" << from << "' not in the template";
  return s.replace(p, from.size(), to);
}

std::string error_of(const std::string& text) {
  auto t = parse_task(text, "dir/task.toml");
  EXPECT_FALSE(t.has_value()) << "expected an error";
  return t ? "" : t.error().message();
}

TEST(TaskLoader, ValidTaskLoads) {
  auto t = parse_task(kValid, "dir/task.toml");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->function, "gemm");
  ASSERT_EQ(t->inputs.size(), 2u);
  EXPECT_EQ(t->inputs[1].dist.kind, DistKind::uniform);
  auto s = t->instantiate(t->bench);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->flops, 2.0 * 64 * 64 * 64);
  EXPECT_EQ(s->bytes, 4.0 * 3 * 64 * 64);  // default: compulsory traffic
  EXPECT_EQ(s->extents[2], (std::vector<int64_t>{64, 64}));
}

TEST(TaskLoader, TomlSyntaxErrorHasLineAndColumn) {
  std::string e = error_of(replace(kValid, "dtype = \"f32\"\n", "dtype = \"f32\n"));

  EXPECT_NE(e.find("dir/task.toml:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("TOML syntax error"), std::string::npos) << e;
}

TEST(TaskLoader, MissingName) {
  std::string e = error_of(replace(kValid, "name = \"t\"\n", ""));
  EXPECT_NE(e.find("missing key 'name'"), std::string::npos) << e;
  EXPECT_NE(e.find("dir/task.toml:"), std::string::npos) << e;
}

TEST(TaskLoader, UnknownDtype) {
  std::string e = error_of(replace(kValid, "dtype = \"f32\"\n", "dtype = \"f16\"\n"));
  EXPECT_NE(e.find("dir/task.toml:3:9: unknown dtype 'f16'"), std::string::npos) << e;
}

TEST(TaskLoader, IntegerTaskDtypeRefused) {
  std::string e = error_of(replace(kValid, "dtype = \"f32\"\n", "dtype = \"i32\"\n"));
  EXPECT_NE(e.find("must be f32, f64 or bf16"), std::string::npos) << e;
}

TEST(TaskLoader, BadFunctionName) {
  std::string e = error_of(replace(kValid, "function = \"gemm\"", "function = \"my-gemm\""));
  EXPECT_NE(e.find(":6:12: function 'my-gemm' is not a C++ identifier"), std::string::npos) << e;
}

TEST(TaskLoader, DuplicateName) {
  std::string e = error_of(replace(kValid, "{ name = \"B\"", "{ name = \"A\""));
  EXPECT_NE(e.find("the name 'A' is declared twice"), std::string::npos) << e;
}

TEST(TaskLoader, ShapeFormulaSyntaxError) {
  std::string e = error_of(replace(kValid, "shape = [\"M\", \"K\"]", "shape = [\"M\", \"K +\"]"));
  EXPECT_NE(e.find(":9:"), std::string::npos) << e;
  EXPECT_NE(e.find("bad formula 'K +'"), std::string::npos) << e;
  EXPECT_NE(e.find("expected a number, a name or '('"), std::string::npos) << e;
}

TEST(TaskLoader, ShapeFormulaUnknownName) {
  std::string e = error_of(replace(kValid, "shape = [\"M\", \"K\"]", "shape = [\"M\", \"Q\"]"));
  EXPECT_NE(e.find("uses 'Q', which is not a dim"), std::string::npos) << e;
}

TEST(TaskLoader, NegativeSizeAtAShape) {
  std::string e = error_of(replace(kValid, "shape = [\"M\", \"K\"]", "shape = [\"M\", \"K - 2\"]"));
  EXPECT_NE(e.find("is negative"), std::string::npos) << e;
}

TEST(TaskLoader, MissingTolerance) {
  std::string e = error_of(
      replace(kValid, "[tolerance]\nf32 = { rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }\n", ""));
  EXPECT_NE(e.find("missing key 'tolerance'"), std::string::npos) << e;
}

TEST(TaskLoader, ToleranceForWrongDtype) {
  std::string e = error_of(replace(kValid, "f32 = { rel_l2", "f64 = { rel_l2"));
  EXPECT_NE(e.find("no tolerance for the task's dtype f32"), std::string::npos) << e;
}

TEST(TaskLoader, ToleranceFieldMissing) {
  std::string e = error_of(replace(kValid, "atol = 1e-5, rtol", "rtol"));
  EXPECT_NE(e.find("missing key 'atol'"), std::string::npos) << e;
}

TEST(TaskLoader, ToleranceOutOfRange) {
  std::string e = error_of(replace(kValid, "rel_l2 = 1e-5", "rel_l2 = 2.0"));
  EXPECT_NE(e.find(":19:"), std::string::npos) << e;
  EXPECT_NE(e.find("'rel_l2' must be in [0, 1)"), std::string::npos) << e;
}

TEST(TaskLoader, MissingFlops) {
  std::string e = error_of(replace(kValid, "flops = \"2 * M * N * K\"", "bytes = \"M\""));
  EXPECT_NE(e.find("missing key 'flops'"), std::string::npos) << e;
}

TEST(TaskLoader, ShapeMissesADim) {
  std::string e = error_of(replace(kValid, "{ M = 17, N = 9, K = 3 }", "{ M = 17, N = 9 }"));
  EXPECT_NE(e.find("does not give a value for dim 'K'"), std::string::npos) << e;
}

TEST(TaskLoader, ShapeUnknownKey) {
  std::string e =
      error_of(replace(kValid, "{ M = 17, N = 9, K = 3 }", "{ M = 17, N = 9, K = 3, Z = 1 }"));
  EXPECT_NE(e.find("'Z' is neither a dim nor a scalar"), std::string::npos) << e;
}

TEST(TaskLoader, NonIntegerDim) {
  std::string e =
      error_of(replace(kValid, "{ M = 17, N = 9, K = 3 }", "{ M = 17.5, N = 9, K = 3 }"));
  EXPECT_NE(e.find("dim 'M' must be a non-negative integer"), std::string::npos) << e;
}

TEST(TaskLoader, TestsWithoutDegenerateSize) {
  std::string e = error_of(replace(kValid, "{ M = 1, N = 1, K = 1 }, ", ""));
  EXPECT_NE(e.find("tests must include a shape with some dim equal to 1"), std::string::npos) << e;
}

TEST(TaskLoader, TestsOnlyMultiplesOfEight) {
  std::string e =
      error_of(replace(kValid, "{ M = 17, N = 9, K = 3 }", "{ M = 16, N = 8, K = 32 }"));
  EXPECT_NE(e.find("not a multiple of 8"), std::string::npos) << e;
}

TEST(TaskLoader, UnknownDistribution) {
  std::string e = error_of(replace(kValid, "kind = \"uniform\"", "kind = \"gaussian\""));
  EXPECT_NE(e.find("unknown distribution 'gaussian'"), std::string::npos) << e;
}

TEST(TaskLoader, UniformNeedsLoBelowHi) {
  std::string e = error_of(replace(kValid, "lo = -1.0, hi = 1.0", "lo = 1.0, hi = -1.0"));
  EXPECT_NE(e.find("uniform: expected lo < hi"), std::string::npos) << e;
}

TEST(TaskLoader, RandintOnFloatTensor) {
  std::string e = error_of(
      replace(kValid, "kind = \"uniform\", lo = -1.0, hi = 1.0", "kind = \"randint\", hi = \"N\""));
  EXPECT_NE(e.find("needs an integer tensor"), std::string::npos) << e;
}

TEST(TaskLoader, IntegerInputNeedsDistribution) {
  std::string e =
      error_of(replace(kValid, "{ name = \"A\", dtype = \"f32\", shape = [\"M\", \"K\"] }",
                       "{ name = \"A\", dtype = \"i32\", shape = [\"M\", \"K\"] }"));
  EXPECT_NE(e.find("integer input 'A' needs a 'dist'"), std::string::npos) << e;
}

TEST(TaskLoader, MixedFloatingDtypesRefused) {
  std::string e = error_of(
      replace(kValid, "{ name = \"C\", dtype = \"f32\"", "{ name = \"C\", dtype = \"f64\""));
  EXPECT_NE(e.find("all floating tensors share the task's dtype"), std::string::npos) << e;
}

TEST(TaskLoader, EmptyOutputs) {
  std::string e = error_of(
      replace(kValid, "outputs = [ { name = \"C\", dtype = \"f32\", shape = [\"M\", \"N\"] } ]",
              "outputs = []"));
  EXPECT_NE(e.find("'outputs' must not be empty"), std::string::npos) << e;
}

TEST(TaskLoader, UnknownTopLevelKey) {
  std::string e = error_of("speed = 3\n" + kValid);
  EXPECT_NE(e.find("dir/task.toml:1:9: unknown key 'speed' in the task"), std::string::npos) << e;
  std::string c = error_of(replace(kValid, "flops = ", "flop = \"1\"\nflops = "));
  EXPECT_NE(c.find("unknown key 'flop' in [cost]"), std::string::npos) << c;
}

TEST(TaskLoader, RandintAndPartitionParse) {
  std::string text = replace(kValid, "{ name = \"A\", dtype = \"f32\", shape = [\"M\", \"K\"] }",
                             "{ name = \"A\", dtype = \"f32\", shape = [\"M\", \"K\"] },\n"
                             "  { name = \"ids\", dtype = \"i32\", shape = [\"M\"], dist = { kind "
                             "= \"randint\", hi = \"N\", sorted = true } },\n"
                             "  { name = \"g\", dtype = \"i64\", shape = [\"K\"], dist = { kind = "
                             "\"partition\", total = \"M\" } }");
  auto t = parse_task(text, "dir/task.toml");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->inputs[1].dist.kind, DistKind::randint);
  EXPECT_TRUE(t->inputs[1].dist.sorted);
  EXPECT_EQ(t->inputs[2].dist.kind, DistKind::partition);
}

TEST(TaskLoader, TeSpecKeepsItsLine) {
  auto t =
      parse_task(kValid + "\n[te]\nspec = \"\"\"\nC[i, j] = sum(k: A[i, k] * B[k, j])\n\"\"\"\n",
                 "d/task.toml");
  ASSERT_TRUE(t) << t.error().message();
  EXPECT_EQ(t->te_spec, "C[i, j] = sum(k: A[i, k] * B[k, j])\n");
  EXPECT_EQ(t->te_line, 26);  // kValid has 22 lines; then a blank line, "[te]", "spec = \"\"\""
}

TEST(TaskLoader, MissingDirectoryAndReference) {
  auto t = load_task("/nonexistent/task");
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().message().find("not a task directory"), std::string::npos);
}

// Every bundled task loads and instantiates at every shape.
TEST(TaskLoader, BundledSuiteLoads) {
  const char* src = std::getenv("KFORGE_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  int count = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(src) / "bench/jaxbench")) {
    if (!e.is_directory()) continue;
    auto t = load_task(e.path());
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_FALSE(t->reference_source.empty());
    ASSERT_TRUE(t->instantiate(t->bench));
    for (const auto& p : t->tests) ASSERT_TRUE(t->instantiate(p));
    ++count;
  }
  EXPECT_GE(count, 5);
}

// Must-fail: task.toml is untrusted text. Each malformed value below once threw, aborted, was
// accepted and checked nothing, or was allocated until the OOM killer came.
TEST(TaskLoaderUntrusted, MalformedFormulasNameTheFileAndField) {
  EXPECT_EQ(error_of(replace(kValid, "flops = \"2 * M * N * K\"", "flops = \".\"")),
            "dir/task.toml:22:9: bad formula '.' in 'flops': column 1: malformed number '.' (a "
            "number needs a digit)");
  EXPECT_EQ(error_of(replace(kValid, "flops = \"2 * M * N * K\"", "flops = \"1e999 * N\"")),
            "dir/task.toml:22:9: bad formula '1e999 * N' in 'flops': column 1: number '1e999' is "
            "out of range");
  const std::string deep = std::string(5000, '(') + "M" + std::string(5000, ')');
  std::string e =
      error_of(replace(kValid, "shape = [\"M\", \"K\"]", "shape = [\"" + deep + "\", \"K\"]"));
  EXPECT_NE(e.find("dir/task.toml:9:"), std::string::npos) << e;
  EXPECT_NE(e.find("(((...' in 'shape': column 101: the formula nests deeper than 100 levels"),
            std::string::npos)
      << e;
}

TEST(TaskLoaderUntrusted, NonFiniteNumbersAreRefused) {
  EXPECT_EQ(error_of(replace(kValid, "rel_l2 = 1e-5", "rel_l2 = nan")),
            "dir/task.toml:19:18: 'rel_l2' must be a finite number");
  EXPECT_EQ(error_of(replace(kValid, "lo = -1.0", "lo = -inf")),
            "dir/task.toml:10:84: 'lo' must be a finite number");
  EXPECT_EQ(error_of(replace(kValid, "lo = -1.0, hi = 1.0", "lo = -1e308, hi = 1e308")),
            "dir/task.toml:10:59: uniform: 'hi - lo' is too large");
}

TEST(TaskLoaderUntrusted, HugeDimsAreRefused) {
  EXPECT_EQ(error_of(replace(kValid, "bench = { M = 64,", "bench = { M = 9223372036854775807,")),
            "dir/task.toml:15:15: dim 'M' must be a non-negative integer (at most 2^53)");
  // Element counts that overflow size_t (2^33 * 2^33 elements): this shape once had 0 elements
  // and checked nothing.
  std::string e = error_of(replace(kValid, "bench = { M = 64, N = 64, K = 64 }",
                                   "bench = { M = 8589934592, N = 8589934592, K = 1 }"));
  EXPECT_EQ(e, "dir/task.toml:15:9: shape of 'C': its element count overflows 64 bits");
  e = error_of(replace(kValid, "bench = { M = 64, N = 64, K = 64 }",
                       "bench = { M = 3037000500, N = 3037000500, K = 1 }"));
  EXPECT_EQ(e, "dir/task.toml:15:9: shape of 'C': its size in bytes overflows 64 bits");
}

TEST(TaskLoaderUntrusted, ShapesBeyondTheMemoryLimitAreRefusedBeforeAllocation) {
  // 2^18 x 2^18 x 4 bytes for C alone: 256 GiB (A and B another 8 KiB): a bench shape of 1 TiB
  // was once allocated until the OOM killer came.
  const std::string big = replace(kValid, "bench = { M = 64, N = 64, K = 64 }",
                                  "bench = { M = 262144, N = 262144, K = 1 }");
  std::string e = error_of(big);
  EXPECT_NE(e.find("dir/task.toml:15:9: shape M=262144 N=262144 K=1 needs 256.0 GiB for one set "
                   "of its inputs and outputs, more than the limit of "),
            std::string::npos)
      << e;
}

TEST(TaskLoaderUntrusted, IntegerScalarsHoldTheirDtype) {
  const std::string with_scalar = replace(kValid, "dims = [\"M\", \"N\", \"K\"]",
                                          "dims = [\"M\", \"N\", \"K\"]\nscalars = [ { name = "
                                          "\"seed\", dtype = \"i32\", default = 1e12 } ]");
  EXPECT_EQ(error_of(with_scalar),
            "dir/task.toml:8:55: scalar 'seed' is i32: expected an integer within +-2147483647");
}

TEST(TaskLoaderUntrusted, RandintLoMustBeAnExactInteger) {
  const std::string t = replace(kValid, "dist = { kind = \"uniform\", lo = -1.0, hi = 1.0 }",
                                "dist = { kind = \"randint\", lo = 1e300, hi = \"N\" }");
  const std::string ints =
      replace(t, "name = \"B\", dtype = \"f32\"", "name = \"B\", dtype = \"i32\"");
  EXPECT_EQ(error_of(ints), "dir/task.toml:10:84: randint: 'lo' must be an integer within +-2^53");
}

TEST(TaskLoaderUntrusted, CountsAreBounded) {
  // 20,000 inputs and 5,000 test shapes ran for minutes (every test shape instantiates every
  // tensor).
  std::string dims = "\"d0\"";
  for (int k = 1; k < 70; ++k) dims += ", \"d" + std::to_string(k) + "\"";
  EXPECT_EQ(error_of(replace(kValid, "dims = [\"M\", \"N\", \"K\"]", "dims = [" + dims + "]")),
            "dir/task.toml:7:8: at most 64 dims (got 70)");
  std::string tests;
  for (int k = 0; k < 65; ++k) tests += "{ M = 1, N = 1, K = 1 }, ";
  EXPECT_EQ(error_of(replace(kValid, "tests = [ ", "tests = [ " + tests)),
            "dir/task.toml:16:9: at most 64 test shapes (got 67)");
  std::string shape = "\"M\"";
  for (int k = 0; k < 16; ++k) shape += ", \"1\"";
  EXPECT_EQ(error_of(replace(kValid, "shape = [\"M\", \"N\"]", "shape = [" + shape + "]")),
            "dir/task.toml:12:50: at most 16 dims in a tensor's shape (got 17)");
}

TEST(TaskLoaderUntrusted, LongTextIsQuotedShortly) {
  const std::string key(100000, 'k');
  std::string e = error_of(kValid + key + " = 1\n");
  EXPECT_EQ(e.substr(0, 46), "dir/task.toml:23:100004: unknown key 'kkkkkkkk");
  EXPECT_NE(e.find(std::string(80, 'k') + "...' in [cost]"), std::string::npos) << e;
  EXPECT_LT(e.size(), 400u);
}

}  // namespace
}  // namespace kf
