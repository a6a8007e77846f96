// export/export_source.h: what a kernel's source needs from a build, and wrapping its
// definitions in a scope without moving an #include into it.
#include "export/export_source.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace kf {
namespace {

const WrapSpec kSpec = {.open = "namespace N {\n", .close = "}  // N\n"};

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t p = text.find(part); p != std::string::npos; p = text.find(part, p + 1)) ++n;
  return n;
}

TEST(ExportSource, TheLeadingIncludesStayOutsideAndTheCodeGoesInside) {
  const std::string src =
      "// kforge: flags -ffast-math\n#include <cstdint>\n\n"
      "static inline int64_t kf_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }\n"
      "void f(const float* x) {}\n";
  EXPECT_EQ(wrap_source(src, kSpec),
            "// kforge: flags -ffast-math\n#include <cstdint>\n\nnamespace N {\n"
            "static inline int64_t kf_min_i64(int64_t a, int64_t b) { return a < b ? a : b; }\n"
            "void f(const float* x) {}\n}  // N\n");
}

TEST(ExportSource, AnIncludeAfterCodeLeavesTheScopeInItsOwnBranch) {
  // The generated prelude includes <immintrin.h> under a guard next to the helper using it.
  const std::string src =
      "#include <cstdint>\nint a;\n#if defined(__AVX512F__)\n#include <immintrin.h>\n"
      "#include <cmath>\n#endif\nint b;\n";
  EXPECT_EQ(wrap_source(src, kSpec),
            "#include <cstdint>\nnamespace N {\nint a;\n#if defined(__AVX512F__)\n}  // N\n"
            "#include <immintrin.h>\n#include <cmath>\nnamespace N {\n#endif\nint b;\n}  // N\n");
}

TEST(ExportSource, AnIfOpenAtTheFirstCodeKeepsTheScopeOutsideIt) {
  const std::string src = "#include <a>\n#ifdef X\n#include <b>\nint x;\n#endif\nint y;\n";
  EXPECT_EQ(wrap_source(src, kSpec),
            "#include <a>\nnamespace N {\n#ifdef X\n}  // N\n#include <b>\nnamespace N {\n"
            "int x;\n#endif\nint y;\n}  // N\n");
}

TEST(ExportSource, BracesInCommentsAndLiteralsDoNotCount) {
  // Each of these would leave a brace open if read as code; the #include after them is at
  // depth 0 and must be taken out of the scope, the one in the function body left alone.
  const std::string src =
      "int a = 1'000; /* { */ // {\n"
      "const char* s = \"{\\\"{\";\nchar c = '{';\nconst char* r = R\"x( { \" } )x\";\n"
      "#define OPEN {\n"
      "#include <cmath>\n"
      "void f() {\n#include \"body.inc\"\n}\n";
  const std::string out = wrap_source(src, kSpec);
  EXPECT_NE(out.find("}  // N\n#include <cmath>\nnamespace N {\n"), std::string::npos) << out;
  EXPECT_NE(out.find("void f() {\n#include \"body.inc\"\n}\n}  // N\n"), std::string::npos) << out;
}

TEST(ExportSource, ASourceWithoutCodeGetsAnEmptyScope) {
  EXPECT_EQ(wrap_source("", kSpec), "namespace N {\n}  // N\n");
  EXPECT_EQ(wrap_source("#include <x>", kSpec), "#include <x>\nnamespace N {\n}  // N\n");
}

TEST(ExportSource, ItSeesOpenMpThreadsAndTheKernelHeader) {
  EXPECT_TRUE(scan_source_use("#pragma omp parallel for\nint x;").openmp_pragmas);
  EXPECT_TRUE(scan_source_use("#  pragma   omp simd\n").openmp_pragmas);
  EXPECT_FALSE(scan_source_use("// #pragma omp parallel\n#pragma ompx\n").openmp_pragmas);
  EXPECT_TRUE(scan_source_use("extern \"C\" int omp_get_max_threads(void);").openmp_calls);
  EXPECT_TRUE(scan_source_use("#include <omp.h>\n").openmp_calls);
  EXPECT_FALSE(scan_source_use("const char* s = \"omp_get_max_threads\";").openmp_calls);
  EXPECT_TRUE(scan_source_use("void f() { std::thread t([] {}); }").threads);
  EXPECT_FALSE(scan_source_use("static thread_local int n; int thread;").threads);
  EXPECT_TRUE(scan_source_use("#include <kforge/kernel.h>\n").kernel_header);
  EXPECT_FALSE(scan_source_use("#include <cmath>\n").kernel_header);
}

TEST(ExportSource, AnyTextWrapsWithBalancedScopes) {
  // Untrusted text: random bytes from a C-like alphabet never stop it, and every scope it opens
  // it closes.
  const std::string alphabet = "#include<>{}\"'/*\\\n Rx(){}omp_1'";
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const int n = static_cast<int>(rng() % 200);
    for (int i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    const std::string out = wrap_source(text, kSpec);
    EXPECT_EQ(count(out, "namespace N {\n"), count(out, "}  // N\n")) << text;
  }
}

}  // namespace
}  // namespace kf
