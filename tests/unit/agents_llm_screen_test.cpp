// Static screening of a model's candidate (agents/llm/screen.h), on the RMSNorm fixture task:
// rmsnorm(x, w, y, N, D, eps), six parameters.
#include <gtest/gtest.h>

#include <string>

#include "agents/llm/screen.h"
#include "schedule/compiled_task.h"
#include "support/fs.h"
#include "support/test_env.h"

namespace kf::agents::llm_brain {
namespace {

const Task& task() {
  static const CompiledTask t =
      compile_task(kf::testing::source_dir() / "tests/integration/written_source/task").value();
  return t.task;
}

const std::string kGood =
    read_file(kf::testing::source_dir() / "tests/integration/written_source/sources/a_unrolled.cpp")
        .value();

std::string why(std::string_view source) {
  Status s = screen_candidate(source, task());
  return s.ok() ? "" : s.message();
}

TEST(LlmScreen, AWellFormedKernelPasses) {
  EXPECT_EQ(why(kGood), "");
  // A template over the scalar type (as references are written) and intrinsics pass too.
  EXPECT_EQ(why("#include <immintrin.h>\n#include \"kforge/kernel.h\"\ntemplate <typename T>\n"
                "void rmsnorm(const T* x, const T* w, T* y, int64_t N, int64_t D,\n"
                "             kf::acc_t<T> eps) noexcept { }\n"),
            "");
}

TEST(LlmScreen, HeadersOutsideTheAllowListAreRefused) {
  EXPECT_NE(why("#include <fstream>\n" + kGood).find("includes fstream"), std::string::npos);
  EXPECT_NE(why("#  include \"/etc/passwd\"\n" + kGood).find("/etc/passwd"), std::string::npos);
  EXPECT_NE(why("#include SOME_MACRO\n" + kGood).find("SOME_MACRO"), std::string::npos);
}

TEST(LlmScreen, TheTasksFunctionMustBeDefinedWithItsArity) {
  EXPECT_NE(why("#include <cstdint>\nvoid rms_norm(const float* x) {}\n").find("does not define"),
            std::string::npos);
  // Declared only, or defined with another number of parameters.
  EXPECT_NE(why("void rmsnorm(const float*, const float*, float*, int64_t, int64_t, float);\n")
                .find("6 parameters"),
            std::string::npos);
  EXPECT_NE(why("void rmsnorm(const float* x, float* y, int64_t N) {}\n").find("does not define"),
            std::string::npos);
  // A comment naming the function does not count as a definition.
  EXPECT_NE(why("// rmsnorm(a, b, c, d, e, f) { }\n").find("does not define"), std::string::npos);
}

TEST(LlmScreen, LibrariesJudgeNamesAndNulBytesAreRefused) {
  EXPECT_NE(why(kGood + "\nvoid g() { cblas_sgemm(0); }\n").find("cblas_"), std::string::npos);
  Status allowed = screen_candidate(kGood + "\nvoid g() { cblas_sgemm(0); }\n", task(),
                                    {.allow_libraries = true});
  EXPECT_TRUE(allowed.ok()) << allowed.message();
  EXPECT_NE(why(kGood + "\nextern \"C\" void kf_entry() {}\n").find("kf_entry"), std::string::npos);
  EXPECT_NE(why(kGood + std::string("\0", 1)).find("NUL"), std::string::npos);
  EXPECT_NE(why(std::string(kMaxCandidateBytes + 1, ' ')).find("bytes, over"), std::string::npos);
}

TEST(LlmScreen, NormalizedSourceIgnoresCommentsAndLayoutOnly) {
  const std::string a = "// fast\nint f(int x) {\n  return x + 1;  /* one */\n}\n";
  const std::string b = "int f(int x){return x+1;}";
  EXPECT_EQ(normalized_source(a), normalized_source(b));
  EXPECT_EQ(normalized_source(b), "int f(int x){return x+1;}");
  EXPECT_NE(normalized_source(b), normalized_source("int f(int x){return x+2;}"));
  // Whitespace inside a literal is kept; "//" inside a string is not a comment.
  EXPECT_NE(normalized_source("s = \"a  b\";"), normalized_source("s = \"a b\";"));
  EXPECT_EQ(normalized_source("s = \"http://x\"; // c"), "s=\"http://x\";");
  // An unterminated comment or literal ends the text without reading past it.
  EXPECT_EQ(normalized_source("int a; /* open"), "int a;");
  EXPECT_EQ(normalized_source("char c = '"), "char c='");
}

}  // namespace
}  // namespace kf::agents::llm_brain
