#include "harness/toolchain.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "harness/shim.h"
#include "support/fs.h"

namespace kf {
namespace {

const char* kShim = "extern \"C\" int kf_probe() { return 1; }\n";

TEST(Toolchain, CompilesAndCachesByContent) {
  // A source no earlier run has compiled, so the first compile cannot be a cache hit.
  const std::string src =
      "int twice(int x) { return 2 * x; }\n// " + std::to_string(std::random_device{}()) + "\n";
  CompiledObject a = compile_solution(src, kShim, {});
  ASSERT_TRUE(a.info.ok) << a.info.log;
  EXPECT_TRUE(std::filesystem::exists(a.so_path));
  EXPECT_FALSE(a.info.cached);
  EXPECT_GT(a.info.seconds, 0);
  CompiledObject b = compile_solution(src, kShim, {});
  EXPECT_TRUE(b.info.cached);
  EXPECT_EQ(b.info.key, a.info.key);
  EXPECT_EQ(b.so_path, a.so_path);
  CompiledObject c = compile_solution(src + "// other\n", kShim, {});
  EXPECT_NE(c.info.key, a.info.key);
}

// A stored object is never replaced: a judge running it holds it open, and its worker's sandbox
// grants that file by path. Compiling the same key again (another judge, or no cache read)
// leaves the stored file in place.
TEST(Toolchain, AStoredObjectIsNeverReplaced) {
  const std::string src =
      "int thrice(int x) { return 3 * x; }\n// " + std::to_string(std::random_device{}()) + "\n";
  CompiledObject a = compile_solution(src, kShim, {});
  ASSERT_TRUE(a.info.ok) << a.info.log;
  struct stat before {};
  ASSERT_EQ(::stat(a.so_path.c_str(), &before), 0);
  CompileOptions again;
  again.use_cache = false;  // compiles and stores again
  CompiledObject b = compile_solution(src, kShim, again);
  ASSERT_TRUE(b.info.ok) << b.info.log;
  EXPECT_FALSE(b.info.cached);
  EXPECT_EQ(b.so_path, a.so_path);
  struct stat after {};
  ASSERT_EQ(::stat(b.so_path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the stored object was replaced";
  // No staged copy is left behind.
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(a.so_path).parent_path()))
    EXPECT_EQ(e.path().string().find(a.info.key + ".so.tmp"), std::string::npos) << e.path();
}

TEST(Toolchain, FlagsChangeTheKey) {
  const std::string src = "int f() { return 0; }\n";
  CompiledObject a = compile_solution(src, kShim, {});
  CompiledObject b = compile_solution("// kforge: flags -funroll-loops\n" + src, kShim, {});
  CompileOptions o;
  o.extra_flags = {"-ffast-math"};
  CompiledObject c = compile_solution(src, kShim, o);
  ASSERT_TRUE(a.info.ok && b.info.ok && c.info.ok);
  EXPECT_NE(a.info.key, c.info.key);
  EXPECT_NE(c.info.command.find("-ffast-math"), std::string::npos);
  EXPECT_NE(b.info.command.find("-funroll-loops"), std::string::npos);
}

TEST(Toolchain, FlagOutsideTheWhitelistIsRefused) {
  auto f = requested_flags("// kforge: flags -O3 -fplugin=evil.so\nint x;\n");
  ASSERT_FALSE(f);
  EXPECT_NE(f.error().message().find("'-O3' is not allowed"), std::string::npos);
  CompiledObject o = compile_solution("// kforge: flags -Wl,-rpath=/tmp\nint x;\n", kShim, {});
  EXPECT_FALSE(o.info.ok);
  EXPECT_NE(o.info.log.find("is not allowed"), std::string::npos);
}

TEST(Toolchain, DiagnosticsAreData) {
  CompiledObject o = compile_solution("int f() { return undefined_name; }\n", kShim, {});
  ASSERT_FALSE(o.info.ok);
  ASSERT_FALSE(o.info.diagnostics.empty());
  const Diagnostic& d = o.info.diagnostics.front();
  EXPECT_EQ(d.file, "candidate.cpp");
  EXPECT_EQ(d.line, 1);
  EXPECT_EQ(d.severity, "error");
  EXPECT_NE(d.message.find("undefined_name"), std::string::npos);
}

TEST(Toolchain, UndefinedSymbolsFailAtLinkTime) {
  CompiledObject o = compile_solution(
      "extern \"C\" void cblas_sgemm();\nvoid g() { cblas_sgemm(); }\n", kShim, {});
  EXPECT_FALSE(o.info.ok);
  EXPECT_NE(o.info.log.find("cblas_sgemm"), std::string::npos);
}

TEST(Toolchain, InterposedClockIsReported) {
  CompiledObject o = compile_solution(
      "#include <ctime>\nextern \"C\" int clock_gettime(clockid_t, struct timespec* t) { t->tv_sec "
      "= 0; return 0; }\n",
      kShim, {});
  ASSERT_TRUE(o.info.ok) << o.info.log;
  ASSERT_EQ(o.interposed_symbols.size(), 1u);
  EXPECT_EQ(o.interposed_symbols[0], "clock_gettime");
}

// A source no earlier run has compiled (nothing comes from the cache).
std::string fresh(const std::string& src) {
  return src + "\n// " + std::to_string(std::random_device{}()) + "\n";
}

Task gemm_task() {
  auto t = parse_task(R"(name = "g"
category = "gemm"
dtype = "f32"
[signature]
function = "gemm"
dims = ["M", "N", "K"]
inputs = [ { name = "A", dtype = "f32", shape = ["M", "K"] },
           { name = "B", dtype = "f32", shape = ["K", "N"] } ]
outputs = [ { name = "C", dtype = "f32", shape = ["M", "N"] } ]
[shapes]
bench = { M = 4, N = 4, K = 4 }
tests = [ { M = 1, N = 1, K = 1 }, { M = 3, N = 5, K = 7 } ]
[tolerance]
f32 = { rel_l2 = 1e-5, atol = 1e-4, rtol = 1e-3 }
[cost]
flops = "2 * M * N * K"
)",
                      "g/task.toml");
  EXPECT_TRUE(t) << t.error().message();
  return *t;
}

std::string said(const CompiledObject& o) {
  std::string s = o.info.log;
  for (const auto& d : o.info.diagnostics) s += "\n" + d.message;
  return s;
}

constexpr const char* kGemmBody =
    "{ for (int64_t i = 0; i < M * N; ++i) C[i] = A[i % (M * K)] + B[i % (K * N)]; }\n";

TEST(Toolchain, PlainAndTemplateFunctionsBindAtTheExactTypes) {
  const EntryShim shim = entry_shim(gemm_task(), ShimKind::candidate);
  CompiledObject plain = compile_solution(
      fresh("#include <cstdint>\nvoid gemm(const float* A, const float* B, float* C, int64_t M, "
            "int64_t N, int64_t K) " +
            std::string(kGemmBody)),
      shim, {});
  EXPECT_TRUE(plain.info.ok) << plain.info.log;
  CompiledObject templ = compile_solution(
      fresh("#include <cstdint>\ntemplate <typename T> void gemm(const T* A, const T* B, T* C, "
            "int64_t M, int64_t N, int64_t K) " +
            std::string(kGemmBody)),
      shim, {});
  EXPECT_TRUE(templ.info.ok) << templ.info.log;
  // Both link the one entry object the cache keeps for this task and kind.
  EXPECT_NE(plain.info.command.find(" kforge_entry.o "), std::string::npos) << plain.info.command;
  size_t entries = 0;
  for (const auto& e : fs::directory_iterator(cache_dir() / "objects"))
    entries += e.path().filename().string().rfind("entry-", 0) == 0;
  EXPECT_GE(entries, 1u);
}

// Each would compile with an appended shim calling gemm(...) (implicit conversions, macros
// rewriting the call): compiled apart and bound at the exact types, each is refused, and the
// message names the signature expected.
TEST(Toolchain, WrongSignaturesAndMacroTricksAreCompileErrors) {
  const EntryShim shim = entry_shim(gemm_task(), ShimKind::candidate);
  const std::vector<std::string> sources = {
      // int dims: an appended call narrows silently
      "void gemm(const float* A, const float* B, float* C, int M, int N, int K) ",
      // a function-like macro adapts the call to a wrong signature
      "void gemm_i(float* A, float* B, float* C, int M, int N, int K) " + std::string(kGemmBody) +
          "#define gemm(a, b, c, m, n, k) gemm_i((float*)(a), (float*)(b), c, m, n, k)\n//",
      // types redefined after the function: the bind text is rewritten with them
      "void gemm(const double* A, const double* B, double* C, int64_t M, int64_t N, int64_t K) " +
          std::string(kGemmBody) + "#define float double\n//",
      "void gemm(float* A, float* B, float* C, int64_t M, int64_t N, int64_t K) " +
          std::string(kGemmBody) + "#define const\n//",
      // its own entry point, with the judge's renamed away
      "void gemm(float* A, float* B, float* C, int M, int N, int K) " + std::string(kGemmBody) +
          "extern \"C\" __attribute__((visibility(\"default\"))) void kf_entry(void* const* b, "
          "const int64_t* d, const double*) { gemm((float*)b[0], (float*)b[1], (float*)b[2], "
          "d[0], d[1], d[2]); }\n#define kf_entry kf_entry_unused\n//",
      // declared, never defined
      "void gemm(const float* A, const float* B, float* C, int64_t M, int64_t N, int64_t K);\n//",
  };
  for (const auto& body : sources) {
    std::string src = "#include <cstdint>\n" + body;
    if (src.back() == ' ') src += kGemmBody;
    CompiledObject o = compile_solution(fresh(src), shim, {});
    EXPECT_FALSE(o.info.ok) << src;
    ASSERT_FALSE(o.info.diagnostics.empty()) << src;
    EXPECT_NE(o.info.diagnostics.front().message.find(
                  "must define `void gemm(const float* A, const float* B, float* C, int64_t M, "
                  "int64_t N, int64_t K)`"),
              std::string::npos)
        << src << "\n"
        << said(o);
  }
}

TEST(Toolchain, IncludesOfHostFilesAreRefusedWithoutTheirText) {
  TempDir secret_dir("kforge-secret");
  const std::string token = "KF_SECRET_TOKEN_" + std::to_string(std::random_device{}());
  const fs::path secret = secret_dir.path() / "secret.h";
  ASSERT_TRUE(write_file_atomic(secret, token + " root:x:0:0:root:/root:/bin/bash\n").ok());
  const fs::path valid = secret_dir.path() / "valid.h";
  ASSERT_TRUE(write_file_atomic(valid, "constexpr long " + token + " = 42;\n").ok());
  const std::string p = secret.string(), v = valid.string();
  const std::vector<std::string> sources = {
      "#include \"" + p + "\"\n",                             // literal
      "#include <../../../../../../../../../.." + p + ">\n",  // climbing
      "#define F \"" + p + "\"\n#include F\n",                // through a macro
      "#/**/include \"" + p + "\"\n",                         // past the literal scan
      "#define F \"" + v + "\"\n#include F\nlong f() { return " + token + "; }\n",  // compiles
  };
  for (const auto& src : sources) {
    CompiledObject o = compile_solution(fresh(src), "", {});
    EXPECT_FALSE(o.info.ok) << src;
    const std::string all = said(o) + o.info.command;
    EXPECT_EQ(all.find(token), std::string::npos) << src << "\n" << all;
    EXPECT_NE(all.find("includes are limited to the standard and system headers"),
              std::string::npos)
        << src << "\n"
        << all;
  }
}

TEST(Toolchain, TheCompilerSeesNoneOfTheJudgesEnvironment) {
  TempDir dir("kforge-env");
  ASSERT_TRUE(write_file_atomic(dir.path() / "kf_env_probe.h", "int probe;\n").ok());
  ASSERT_EQ(setenv("CPLUS_INCLUDE_PATH", dir.path().c_str(), 1), 0);
  CompiledObject o = compile_solution(fresh("#include <kf_env_probe.h>\n"), "", {});
  unsetenv("CPLUS_INCLUDE_PATH");
  EXPECT_FALSE(o.info.ok);
  EXPECT_NE(said(o).find("kf_env_probe.h: No such file"), std::string::npos) << said(o);
}

TEST(Toolchain, CompileBombsEndAtTheLimits) {
  CompileOptions fast;
  fast.timeout_s = 3;
  fast.use_cache = false;
  auto start = std::chrono::steady_clock::now();
  CompiledObject loop =
      compile_solution(fresh("constexpr long f() { long s = 0; for (long i = 0; i < 200000; ++i)\n"
                             "  for (long j = 0; j < 200000; ++j) s += i ^ j; return s; }\n"
                             "constexpr long x = f();\n"),
                       "", fast);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_FALSE(loop.info.ok);
  EXPECT_NE(said(loop).find("timed out"), std::string::npos) << said(loop);
  EXPECT_LT(s, 10);

  CompileOptions small;
  small.max_file_bytes = size_t{8} << 20;
  small.max_object_bytes = size_t{2} << 20;
  CompiledObject fill = compile_solution(fresh("asm(\".fill 0x2000000, 1, 0x5a\");\n"), "", small);
  EXPECT_FALSE(fill.info.ok);
  EXPECT_NE(said(fill).find("too large"), std::string::npos) << said(fill);
  CompiledObject big = compile_solution(fresh("asm(\".fill 0x400000, 1, 0x5a\");\n"), "", small);
  EXPECT_FALSE(big.info.ok);
  EXPECT_NE(said(big).find("the compiled object is too large"), std::string::npos) << said(big);
  EXPECT_FALSE(fs::exists(big.so_path));  // nothing large enters the cache
}

TEST(Toolchain, PragmaMessagesCannotBreakTheLog) {
  CompiledObject o = compile_solution(fresh("#pragma message(\"\\xff\\xfe \\x1b[2J \" \"" +
                                            std::string(200000, 'A') + "\")\nint x;\n"),
                                      "", {});
  EXPECT_TRUE(o.info.ok) << o.info.log.substr(0, 2000);
  EXPECT_LT(o.info.log.size(), kMaxLogBytes + 200);
  EXPECT_EQ(o.info.log.find('\x1b'), std::string::npos);
  EXPECT_NO_THROW((void)nlohmann::json(o.info.log).dump());
  CompiledObject huge = compile_solution(
      fresh("#pragma message(\"" + std::string(3 << 20, 'B') + "\")\nint x;\n"), "", {});
  EXPECT_FALSE(huge.info.ok);
  EXPECT_NE(said(huge).find("too large"), std::string::npos) << said(huge).substr(0, 2000);
}

TEST(Toolchain, LongFlagLinesAreScannedLinearly) {
  const std::string line = "// kforge: flags " + std::string(1 << 20, ' ') + "-ffast-math" +
                           std::string(1 << 20, '\t') + "\nint x;\n";
  auto f = requested_flags(line);
  ASSERT_TRUE(f) << f.error().message();
  EXPECT_EQ(*f, std::vector<std::string>{"-ffast-math"});
  auto bad = requested_flags("// kforge: flags -f" + std::string(1 << 20, 'x') + "\xff\n");
  ASSERT_FALSE(bad);
  EXPECT_LT(bad.error().message().size(), 2000u);
  EXPECT_NO_THROW((void)nlohmann::json(bad.error().message()).dump());
}

}  // namespace
}  // namespace kf
