// find_kernel (task/signature_parse.h): the kernel in a user's C++ file is the one void function at
// global scope with pointer parameters, or the one --function names; helpers, classes, lambdas,
// namespaces and braces inside comments or strings do not confuse it, and every failure says why.
#include <gtest/gtest.h>

#include <string>

#include "task/signature_parse.h"

namespace kf {
namespace {

const char* kFile = R"(#include <cmath>
#include <cstdint>

// A helper: not a kernel (it returns float).
static inline float gelu(float v) { return 0.5f * v * (1.0f + std::tanh(0.79788456f * v)); }

struct Params { int n; };  // a class: skipped whole
auto twice = [](float v) { return 2 * v; };
const char* note = "void fake(const float* x, float* y) { }";

/* void commented(const float* x, float* y) {} */
void gelu_rows(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i) y[i] = gelu(x[i]);  // { unbalanced in a comment
}
)";

TEST(FindKernel, FindsTheOnlyKernelAmongHelpers) {
  auto site = find_kernel(kFile, "");
  ASSERT_TRUE(site.has_value()) << site.error().message();
  EXPECT_EQ(site->signature.function, "gelu_rows");
  EXPECT_EQ(site->line, 12);
  const std::string text(kFile);
  EXPECT_EQ(text.substr(site->head_begin, 4), "void");
  EXPECT_EQ(text.substr(site->params_begin, 5), "const");
  EXPECT_EQ(text[site->params_end], ')');
  EXPECT_EQ(text[site->body_begin], '{');
  EXPECT_EQ(text[site->body_end - 1], '}');
  EXPECT_EQ(text.substr(site->body_end), "\n");
}

TEST(FindKernel, FunctionNamesOneOfSeveral) {
  const std::string two =
      "void a(const float* x, float* y, int n) { y[0] = x[0]; }\n"
      "void b(const float* x, float* y, int n) { y[0] = -x[0]; }\n";
  auto both = find_kernel(two, "");
  ASSERT_FALSE(both.has_value());
  EXPECT_NE(both.error().message().find("2 functions could be the kernel: a (line 1), b (line 2)"),
            std::string::npos)
      << both.error().message();
  EXPECT_NE(both.error().message().find("--function"), std::string::npos);
  auto b = find_kernel(two, "b");
  ASSERT_TRUE(b.has_value()) << b.error().message();
  EXPECT_EQ(b->line, 2);
  auto none = find_kernel(two, "c");
  ASSERT_FALSE(none.has_value());
  EXPECT_NE(none.error().message().find("no function 'c'"), std::string::npos);
}

TEST(FindKernel, TemplatesAndNoexceptAreFound) {
  auto t = find_kernel(
      "template <typename T>\nvoid f(const T* x, T* y, int64_t n) noexcept { y[0] = x[0]; }\n", "");
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ(t->signature.template_param, "T");
}

TEST(FindKernel, SaysWhyNothingQualifies) {
  auto in_ns = find_kernel("namespace ops {\nvoid f(const float* x, float* y) {}\n}\n", "");
  ASSERT_FALSE(in_ns.has_value());
  EXPECT_NE(in_ns.error().message().find("not inside namespace ops (line 1)"), std::string::npos)
      << in_ns.error().message();

  auto helper_only = find_kernel("float sq(float v) { return v * v; }\n", "");
  ASSERT_FALSE(helper_only.has_value());
  EXPECT_NE(helper_only.error().message().find("sq (line 1: 'sq' returns float"), std::string::npos)
      << helper_only.error().message();

  auto named_bad = find_kernel("void k(const float& x, float* y) {}\n", "k");
  ASSERT_FALSE(named_bad.has_value());
  EXPECT_NE(named_bad.error().message().find("line 1: 'x' is a reference"), std::string::npos)
      << named_bad.error().message();

  auto no_output = find_kernel("void k(const float* x, int n) {}\n", "k");
  ASSERT_FALSE(no_output.has_value());
  EXPECT_NE(no_output.error().message().find("line 1: 'k' has no output tensor"),
            std::string::npos);

  auto open = find_kernel("void k(const float* x, float* y) {\n  if (x) {\n", "");
  ASSERT_FALSE(open.has_value());
  EXPECT_NE(open.error().message().find("line 1: '{' without a matching '}'"), std::string::npos)
      << open.error().message();

  auto unlexable = find_kernel("void k(const float* x, float* y) { /* }\n", "");
  ASSERT_FALSE(unlexable.has_value());
  EXPECT_NE(unlexable.error().message().find("unterminated comment"), std::string::npos);
}

}  // namespace
}  // namespace kf
