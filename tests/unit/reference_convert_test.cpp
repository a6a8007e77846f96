// convert_reference (task/reference_convert.h): a plain kernel becomes the template over T a task's
// reference must be. The differential test compiles the original and the converted code into one
// program and requires the converted code at T = float to give bit-identical outputs to the
// original, and at T = double to stay within float rounding of it (the oracle computes the same
// function more precisely). What cannot be converted keeps the user's body with a TODO(kforge).
#include "task/reference_convert.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/fs.h"
#include "support/subprocess.h"
#include "task/task_skeleton.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

ReferenceDraft convert(const std::string& source, DType dtype = DType::f32,
                       const std::string& function = "") {
  auto site = find_kernel(source, function);
  KF_CHECK(site.has_value()) << site.error().message();
  return convert_reference(source, *site, dtype, "k.cpp");
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// A kernel that uses every rewrite: an int size out of order, a double scalar, literals, float
// math, FLT_MAX, a float local, a cast and numeric_limits.
const char* kPlain = R"(#include <cfloat>
#include <cmath>
#include <cstddef>
#include <limits>

void softclip_rows(int cols, double scale, const float* x, float* y, std::size_t rows) {
  for (std::size_t r = 0; r < rows; ++r) {
    float m = -FLT_MAX;
    for (int c = 0; c < cols; ++c) m = fmaxf(m, x[r * cols + c]);
    for (int c = 0; c < cols; ++c) {
      const float v = static_cast<float>(scale) * (x[r * cols + c] - m);
      y[r * cols + c] = v / (1.0f + fabsf(v)) + 0.1f * expf(v * 0.5f) +
                        std::numeric_limits<float>::epsilon();
    }
  }
}
)";

TEST(ConvertReference, RewritesEveryFloatUseIntoT) {
  const ReferenceDraft d = convert(kPlain);
  EXPECT_TRUE(d.todos.empty()) << d.todos.front();
  EXPECT_TRUE(has(d.text,
                  "template <typename T>\nvoid softclip_rows(const T* x, T* y, int64_t cols_arg, "
                  "int64_t rows_arg, kf::acc_t<T> scale_arg) {"))
      << d.text;
  EXPECT_TRUE(has(d.text, "  int cols(cols_arg);")) << d.text;
  EXPECT_TRUE(has(d.text, "  std::size_t rows(rows_arg);")) << d.text;
  EXPECT_TRUE(has(d.text, "  double scale(scale_arg);")) << d.text;
  EXPECT_TRUE(has(d.text, "T m = -std::numeric_limits<T>::max();")) << d.text;
  EXPECT_TRUE(has(d.text, "m = std::fmax(m, x[r * cols + c]);")) << d.text;
  EXPECT_TRUE(has(d.text,
                  "y[r * cols + c] = v / (T(1.0f) + std::fabs(v)) + T(0.1f) * "
                  "std::exp(v * T(0.5f)) +"))
      << d.text;
  EXPECT_TRUE(has(d.text, "std::numeric_limits<T>::epsilon()")) << d.text;
  EXPECT_TRUE(has(d.text, "static_cast<T>(scale)")) << d.text;
  EXPECT_TRUE(has(d.text, "#include <kforge/kernel.h>"));
  EXPECT_TRUE(missing_fields("", d.text).empty()) << "no TODO(kforge) line";
}

TEST(ConvertReference, ConvertedCodeComputesWhatTheOriginalDid) {
  const ReferenceDraft d = convert(kPlain);
  TempDir dir("kf_convert");
  ASSERT_TRUE(write_file_atomic(dir.path() / "converted.cpp", d.text).ok());
  ASSERT_TRUE(write_file_atomic(dir.path() / "original.cpp", kPlain).ok());
  const std::string main_text = R"(#include "converted.cpp"
#define softclip_rows original_softclip_rows
#include "original.cpp"
#undef softclip_rows
#include <cstdio>
#include <cstring>
int main() {
  const int rows = 7, cols = 13;
  float x[rows * cols], a[rows * cols], b[rows * cols];
  double xd[rows * cols], c[rows * cols];
  unsigned s = 12345;
  for (int i = 0; i < rows * cols; ++i) {
    s = s * 1103515245u + 12345u;
    x[i] = static_cast<float>((s >> 8) % 20000) / 5000.0f - 2.0f;
    xd[i] = x[i];
  }
  original_softclip_rows(cols, 0.75, x, a, rows);
  softclip_rows<float>(x, b, cols, rows, 0.75f);
  softclip_rows<double>(xd, c, cols, rows, 0.75);
  if (std::memcmp(a, b, sizeof a) != 0) { std::puts("float differs"); return 1; }
  for (int i = 0; i < rows * cols; ++i) {
    const double e = c[i] - a[i], bound = 1e-5 * (1 + (c[i] < 0 ? -c[i] : c[i]));
    if (e > bound || e < -bound) { std::printf("double %d: %g vs %g\n", i, c[i], a[i]); return 1; }
  }
  std::puts("same");
}
)";
  ASSERT_TRUE(write_file_atomic(dir.path() / "main.cpp", main_text).ok());
  const std::string runtime = std::string(KFORGE_TEST_SOURCE_DIR) + "/runtime";
  auto built = run_process(
      {.argv = {"g++", "-std=c++20", "-O2", "-ffp-contract=off", "-I" + runtime,
                (dir.path() / "main.cpp").string(), "-o", (dir.path() / "diff").string()},
       .timeout_s = 120});
  ASSERT_TRUE(built.has_value());
  ASSERT_TRUE(built->ok()) << built->err;
  auto ran = run_process({.argv = {(dir.path() / "diff").string()}, .timeout_s = 30});
  ASSERT_TRUE(ran.has_value());
  EXPECT_TRUE(ran->ok()) << ran->out << ran->err;
  EXPECT_EQ(ran->out, "same\n");
}

TEST(ConvertReference, TemplateInAbiOrderIsCopiedUnchanged) {
  const std::string t =
      "#include <kforge/kernel.h>\ntemplate <typename T>\n"
      "void f(const T* x, T* y, int64_t n, kf::acc_t<T> a) { for (int64_t i = 0; i < n; ++i) "
      "y[i] = T(a * x[i]); }\n";
  const ReferenceDraft d = convert(t);
  EXPECT_EQ(d.text, t);
}

TEST(ConvertReference, TemplateOutOfOrderGetsTheAbiHeadAndKeepsItsBody) {
  const std::string t =
      "template <typename U>\nvoid f(int n, const U* x, U* y) { for (int i = 0; i < n; ++i) "
      "y[i] = x[i] * 2.0f; }\n";
  const ReferenceDraft d = convert(t);
  EXPECT_TRUE(has(d.text, "template <typename U>\nvoid f(const U* x, U* y, int64_t n_arg) {"))
      << d.text;
  EXPECT_TRUE(has(d.text, "y[i] = x[i] * 2.0f;")) << "a template's body is the user's";
}

TEST(ConvertReference, IntrinsicsKeepTheBodyWithATodo) {
  const std::string src =
      "#include <immintrin.h>\n"
      "void f(const float* x, float* y, int64_t n) {\n"
      "  for (int64_t i = 0; i < n; i += 8) _mm256_storeu_ps(y + i, _mm256_loadu_ps(x + i));\n"
      "}\n";
  const ReferenceDraft d = convert(src);
  ASSERT_EQ(d.todos.size(), 1u);
  EXPECT_TRUE(has(d.todos[0], "_mm256_storeu_ps (line 3)")) << d.todos[0];
  EXPECT_TRUE(has(d.text, "_mm256_storeu_ps(y + i, _mm256_loadu_ps(x + i));")) << d.text;
  EXPECT_TRUE(has(d.text, "void f(const T* x, T* y, int64_t n) {")) << d.text;
  const std::vector<MissingField> m = missing_fields("", d.text);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].file, "reference.cpp");
  EXPECT_TRUE(has(m[0].what, "the body uses _mm256_storeu_ps")) << m[0].what;
}

TEST(ConvertReference, FloatOutsideTheKernelIsATodo) {
  const std::string src =
      "static float sq(float v) { return v * v; }\n"
      "void f(const float* x, float* y, int64_t n) { for (int64_t i = 0; i < n; ++i) y[i] = "
      "sq(x[i]); }\n";
  const ReferenceDraft d = convert(src);
  ASSERT_EQ(d.todos.size(), 1u);
  EXPECT_TRUE(has(d.todos[0], "line 1 uses float outside f")) << d.todos[0];
  EXPECT_TRUE(has(d.text, "static float sq(float v)")) << "the helper is left as written";
}

TEST(ConvertReference, DoubleAndBf16Kernels) {
  const ReferenceDraft d = convert(
      "void f(const double* x, double* y, int64_t n) { double s = 0.5f; y[0] = x[0] * s; }\n",
      DType::f64);
  EXPECT_TRUE(has(d.text, "T s = 0.5f;")) << "a double kernel's literals are its own";
  const ReferenceDraft b = convert(
      "void g(const kf::bf16* x, kf::bf16* y, int64_t n) { float s = float(x[0]) * 2.0f; y[0] = "
      "kf::bf16(s); }\n",
      DType::bf16);
  EXPECT_TRUE(has(b.text, "kf::acc_t<T> s = kf::acc_t<T>(x[0]) * kf::acc_t<T>(2.0f); y[0] = T(s);"))
      << b.text;
}

TEST(ConvertReference, TemplateNameAvoidsTheSourcesIdentifiers) {
  const ReferenceDraft d =
      convert("void f(const float* T, float* y, int64_t n) { int Elem = 0; y[0] = T[Elem]; }\n");
  EXPECT_TRUE(has(d.text, "template <typename ElemT>\nvoid f(const ElemT* T, ElemT* y")) << d.text;
}

TEST(ReferenceFromSignature, IsATemplateWithATodoBody) {
  auto sig = parse_signature("void row_sum(const float* x, float* y, int64_t rows, int64_t cols)");
  ASSERT_TRUE(sig.has_value());
  const std::string text = reference_from_signature(*sig, "void row_sum(...)");
  EXPECT_TRUE(has(text,
                  "template <typename T>\nvoid row_sum(const T* x, T* y, int64_t rows, "
                  "int64_t cols) {"))
      << text;
  const std::vector<MissingField> m = missing_fields("", text);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(has(m[0].what, "write the reference: every element of y")) << m[0].what;
}

}  // namespace
}  // namespace kf
