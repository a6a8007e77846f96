// The kernel signature parser (task/signature_parse.h) and the C++ lexer under it: the spellings
// a user writes map onto the task's roles and dtypes, everything else is refused with a message
// that says where and why, and junk text of any kind gets an error, never a crash.
#include "task/signature_parse.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "task/cpp_lexer.h"

namespace kf {
namespace {

ParsedSignature parse_ok(const std::string& text) {
  auto s = parse_signature(text);
  EXPECT_TRUE(s.has_value()) << text << "\n" << (s ? "" : s.error().message());
  return s ? *s : ParsedSignature{};
}

std::string parse_error(const std::string& text) {
  auto s = parse_signature(text);
  EXPECT_FALSE(s.has_value()) << text;
  return s ? "" : s.error().message();
}

TEST(SignatureParse, PlainFunctionMapsPointersSizesAndScalars) {
  const ParsedSignature s =
      parse_ok("void scale_add(const float* x, const float* y, float* z, int64_t n, float a)");
  EXPECT_EQ(s.function, "scale_add");
  EXPECT_FALSE(s.is_template());
  ASSERT_TRUE(s.dtype.has_value());
  EXPECT_EQ(*s.dtype, DType::f32);
  ASSERT_EQ(s.params.size(), 5u);
  EXPECT_EQ(s.params[0].role, ParamRole::input);
  EXPECT_EQ(s.params[1].role, ParamRole::input);
  EXPECT_EQ(s.params[2].role, ParamRole::output);
  EXPECT_EQ(s.params[3].role, ParamRole::dim);
  EXPECT_EQ(s.params[4].role, ParamRole::scalar);
  EXPECT_TRUE(s.params[4].element);
  EXPECT_EQ(s.params[2].name, "z");
  EXPECT_TRUE(s.in_abi_order());
  EXPECT_TRUE(check_kernel_signature(s).ok());
}

TEST(SignatureParse, ConstPlacementRestrictAndArrays) {
  const ParsedSignature s = parse_ok(
      "void f(float const* a, const float* const b, float const * __restrict__ c, "
      "const float d[], float* __restrict e, float g[16], std::size_t n);");
  ASSERT_EQ(s.params.size(), 7u);
  for (int i : {0, 1, 2, 3}) EXPECT_EQ(s.params[i].role, ParamRole::input) << i;
  for (int i : {4, 5}) EXPECT_EQ(s.params[i].role, ParamRole::output) << i;
  EXPECT_TRUE(s.params[2].restrict_ptr);
  EXPECT_TRUE(s.params[4].restrict_ptr);
  EXPECT_FALSE(s.params[0].restrict_ptr);
  EXPECT_EQ(s.params[6].role, ParamRole::dim);
  EXPECT_EQ(s.params[6].base, "size_t");
  EXPECT_EQ(s.params[2].declared, "float const * __restrict__");
}

TEST(SignatureParse, IntegerSpellingsAreDimsAndIntegerTensorsKeepTheirDtype) {
  const ParsedSignature s = parse_ok(
      "void g(const int32_t* idx, const float* table, int64_t* out_i, float* out, int a, "
      "unsigned long b, long int c, std::int64_t d, const int e, size_t f) noexcept {}");
  EXPECT_EQ(s.params[0].dtype, DType::i32);
  EXPECT_FALSE(s.params[0].element);
  EXPECT_EQ(s.params[2].dtype, DType::i64);
  EXPECT_EQ(s.params[2].role, ParamRole::output);
  for (size_t i = 4; i < s.params.size(); ++i) EXPECT_EQ(s.params[i].role, ParamRole::dim) << i;
  EXPECT_EQ(s.params[5].base, "unsigned long");
  EXPECT_EQ(s.params[6].base, "long");
  EXPECT_EQ(s.params[7].base, "int64_t");
  EXPECT_TRUE(s.params[8].value_const);
}

TEST(SignatureParse, TemplatesOverOneElementType) {
  const ParsedSignature s = parse_ok(
      "template <typename T> void rmsnorm(const T* x, const T* w, T* y, int64_t N, int64_t D, "
      "kf::acc_t<T> eps)");
  EXPECT_EQ(s.template_param, "T");
  EXPECT_FALSE(s.dtype.has_value());
  EXPECT_EQ(s.params[5].role, ParamRole::scalar);
  EXPECT_TRUE(s.params[5].element);
  EXPECT_TRUE(s.params[0].element);

  const ParsedSignature u =
      parse_ok("template <class U = float> static inline void h(const U* a, U* b, int n, U s)");
  EXPECT_EQ(u.template_param, "U");
  EXPECT_EQ(u.params[3].role, ParamRole::scalar);
  EXPECT_EQ(parse_ok("template <typename T> void k(const T* a, T* b, typename "
                     "kf::acc_type<T>::type s)")
                .params[2]
                .base,
            "kf::acc_t<T>");
}

TEST(SignatureParse, DoubleAndBf16KernelsFixTheirDtype) {
  EXPECT_EQ(*parse_ok("void f(const double* x, double* y, int n, float s)").dtype, DType::f64);
  const ParsedSignature b = parse_ok("void f(const kf::bf16* x, kf::bf16* y, int64_t n, float s)");
  EXPECT_EQ(*b.dtype, DType::bf16);
  EXPECT_TRUE(b.params[3].element) << "a bf16 kernel's scalars are float";
}

TEST(SignatureParse, DefaultArgumentsGiveScalarDefaults) {
  const ParsedSignature s = parse_ok(
      "void f(const float* x, float* y, int n = 4, float a = 0.5f, double b = -2, "
      "float c = 1e-3F, float d = some_constant)");
  EXPECT_FALSE(s.params[2].default_value.has_value()) << "dims have no default";
  EXPECT_EQ(s.params[3].default_value, 0.5);
  EXPECT_EQ(s.params[4].default_value, -2.0);
  EXPECT_EQ(s.params[5].default_value, 1e-3);
  EXPECT_FALSE(s.params[6].default_value.has_value());
}

TEST(SignatureParse, AbiOrderPutsInputsOutputsDimsScalars) {
  const ParsedSignature s = parse_ok("void saxpy(int n, float a, const float* x, float* y)");
  EXPECT_FALSE(s.in_abi_order());
  std::string order;
  for (const SignatureParam& p : s.abi_order()) order += p.name;
  EXPECT_EQ(order, "xyna");
}

struct Refusal {
  std::string text, expected;
};

TEST(SignatureParse, RefusesWhatIsNoKernelWithItsReason) {
  const Refusal cases[] = {
      {"void f(const float& x, float* y)", "column 19: 'x' is a reference"},
      {"void f(const float** x, float* y)", "pointer to a pointer"},
      {"void f(const void* x, float* y)", "is void*"},
      {"void f(const float* x, float* y, bool flip)", "'flip' is a bool"},
      {"void f(const float*, float* y)", "without a name"},
      {"float f(const float* x, float* y)", "'f' returns float"},
      {"void f(const float* x, double* y)", "share one dtype"},
      {"template <typename T, int B> void f(const T* x, T* y)", "one element type"},
      {"template <typename T> void f(const float* x, T* y)", "make it T"},
      {"void f(const std::vector<float>& x, float* y)", "is a reference"},
      {"void f(const uint8_t* x, float* y)", "tensors are float, double"},
      {"void f(const float* x, float* y, kf::bf16 s)", "pass scalars as float"},
      {"void f(const float* x, float* y, Foo s)", "cannot map"},
      {"void f(const float* x float* y)", "',' missing"},
      {"void f(const float x[][4], float* y)", "multi-dimensional"},
      {"void f(const float* x, float* y, ...)", "variadic"},
      {"void f(const float* x, float* x)", "two parameters named 'x'"},
      {"void ns::f(const float* x, float* y)", "qualified"},
      {"void f(const float* x, float* y) const", "after the parameter list"},
      {"void f(const float* x, float* y", "without a matching ')'"},
      {"void f(const float* x, float* y) /* open", "unterminated comment"},
      {"void f(\"x\")", "without a name"},
      {"", "empty signature"},
      {"hello world", "expected a function declaration"},
      {"#include <x>\nvoid f(const float* x, float* y)", "preprocessor"},
  };
  for (const Refusal& c : cases) {
    const std::string e = parse_error(c.text);
    EXPECT_NE(e.find(c.expected), std::string::npos) << c.text << "\n got: " << e;
  }
}

TEST(SignatureParse, KernelCheckNeedsAnInputAndAnOutput) {
  auto no_input = check_kernel_signature(parse_ok("void f(float* y, int64_t n)"));
  EXPECT_NE(no_input.message().find("no input tensor"), std::string::npos);
  auto no_output = check_kernel_signature(parse_ok("void f(const float* x, int64_t n)"));
  EXPECT_NE(no_output.message().find("no output tensor"), std::string::npos);
  auto same = check_kernel_signature(parse_ok("void f(const float* f, float* y)"));
  EXPECT_NE(same.message().find("the function's name"), std::string::npos);
}

TEST(CppLexer, SkipsCommentsAndLiteralsAndKeepsPlaces) {
  const std::string src =
      "#include <cmath>\n"
      "// void fake(float* a) {\n"
      "/* } { */ auto s = R\"x(a } \" {)x\"; char c = '}';\n"
      "int main() { return 0x1f + 1.5e-3f; }\n";
  auto t = lex_cpp(src);
  ASSERT_TRUE(t.has_value()) << t.error().message();
  EXPECT_EQ((*t)[0].kind, CppTokenKind::directive);
  int braces = 0;
  for (const CppToken& k : *t) braces += k.is("{") + k.is("}");
  EXPECT_EQ(braces, 2) << "braces in comments, strings and chars are not tokens";
  bool saw = false;
  for (const CppToken& k : *t)
    if (k.is("1.5e-3f")) {
      saw = true;
      EXPECT_EQ(k.kind, CppTokenKind::number);
      EXPECT_EQ(k.line, 4);
      EXPECT_EQ(src.substr(k.offset, k.text.size()), "1.5e-3f");
    }
  EXPECT_TRUE(saw);
  EXPECT_FALSE(lex_cpp("int x = \"open;\n").has_value());
  EXPECT_FALSE(lex_cpp("auto s = R\"abc(never closed").has_value());
  EXPECT_FALSE(lex_cpp(std::string(kMaxCppSourceBytes + 1, ' ')).has_value());
}

TEST(SignatureParse, JunkNeverCrashes) {
  // Mutations of good signatures and random bytes: every one ends in a value or an error.
  const std::string seeds[] = {
      "template <typename T> void r(const T* x, T* y, int64_t n, kf::acc_t<T> e = 1e-5f)",
      "void f(const float* __restrict__ x, float y[], std::size_t n, double a)",
      "void g(const int32_t* i, const kf::bf16* b, kf::bf16* o, long n) noexcept(true) {}",
  };
  const std::string alphabet = "()<>[]{},;*&:=\"'/\\#.- \n\tTfloatconstvoidint64_t__restrict__0x1e";
  std::mt19937 rng(28);
  for (int iter = 0; iter < 4000; ++iter) {
    std::string s = seeds[iter % 3];
    const int edits = 1 + static_cast<int>(rng() % 6);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 4) {
        case 0:
          s.erase(at, 1 + rng() % 4);
          break;
        case 1:
          s.insert(at, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 2:
          s[at] = static_cast<char>(rng() % 256);
          break;
        case 3:
          s.insert(at, s.substr(rng() % s.size(), 1 + rng() % 8));
          break;
      }
    }
    auto r = parse_signature(s);
    if (r) (void)check_kernel_signature(*r);
    (void)find_kernel(s + " {}", "");
  }
  // A huge parameter list is refused early, not checked pairwise.
  std::string wide = "void f(";
  for (int i = 0; i < 20000; ++i) wide += "float* p" + std::to_string(i) + ", ";
  wide += "int n)";
  EXPECT_NE(parse_error(wide).find("more than 256 parameters"), std::string::npos);
  // Deep nesting is not recursion.
  const std::string deep = "void f(const float* x, float* y" + std::string(100000, '(') + ")";
  EXPECT_FALSE(parse_signature(deep).has_value());
  EXPECT_FALSE(find_kernel(std::string(100000, '{'), "").has_value());
}

}  // namespace
}  // namespace kf
