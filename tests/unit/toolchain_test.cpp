#include "harness/toolchain.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <random>

namespace kf {
namespace {

const char* kShim = "extern \"C\" int kf_probe() { return 1; }\n";

TEST(Toolchain, CompilesAndCachesByContent) {
  // A source no earlier run has compiled, so the first compile cannot be a cache hit.
  const std::string src = "int twice(int x) { return 2 * x; }\n// " +
                          std::to_string(std::random_device{}()) + "\n";
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
  CompiledObject o = compile_solution("extern \"C\" void cblas_sgemm();\nvoid g() { cblas_sgemm(); }\n", kShim, {});
  EXPECT_FALSE(o.info.ok);
  EXPECT_NE(o.info.log.find("cblas_sgemm"), std::string::npos);
}

TEST(Toolchain, InterposedClockIsReported) {
  CompiledObject o = compile_solution(
      "#include <ctime>\nextern \"C\" int clock_gettime(clockid_t, struct timespec* t) { t->tv_sec = 0; return 0; }\n",
      kShim, {});
  ASSERT_TRUE(o.info.ok) << o.info.log;
  ASSERT_EQ(o.interposed_symbols.size(), 1u);
  EXPECT_EQ(o.interposed_symbols[0], "clock_gettime");
}

TEST(Toolchain, ParseDiagnostics) {
  auto d = parse_diagnostics(
      "a.cpp:3:7: error: expected ';'\nnoise\nb.cpp:10:1: warning: unused\n"
      "/usr/bin/ld: x.o: undefined reference to `foo'\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].line, 3);
  EXPECT_EQ(d[1].severity, "warning");
  EXPECT_EQ(d[2].severity, "error");
}

}  // namespace
}  // namespace kf
