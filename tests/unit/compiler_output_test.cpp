#include "harness/compiler_output.h"

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

namespace kf {
namespace {

IncludePolicy policy() {
  return {.allowed_dirs = {"/usr/include", "/usr/lib/gcc/x86_64-linux-gnu/12/include"},
          .build_dir = "/tmp/kforge-compile-abc"};
}

TEST(CompilerOutput, IncludesAreCheckedLexically) {
  const IncludePolicy p = policy();
  EXPECT_TRUE(include_allowed("/usr/include/stdio.h", p));
  EXPECT_TRUE(include_allowed("/usr/include//c++/12/../12/vector", p));
  EXPECT_TRUE(include_allowed("/tmp/kforge-compile-abc/include/kforge/kernel.h", p));
  EXPECT_TRUE(include_allowed("include/kforge/kernel.h", p));  // relative to the build dir
  EXPECT_FALSE(include_allowed("/etc/passwd", p));
  EXPECT_FALSE(include_allowed("/usr/include/../../etc/passwd", p));
  EXPECT_FALSE(include_allowed("../../etc/shadow", p));
  EXPECT_FALSE(include_allowed("/usr/includes/x.h", p));  // a sibling sharing the prefix
  EXPECT_FALSE(include_allowed("/tmp/kforge-compile-abcd/x.h", p));
  EXPECT_FALSE(include_allowed("", p));
}

TEST(CompilerOutput, LiteralIncludesOutsideAreFound) {
  EXPECT_EQ(literal_include_outside("#include \"/etc/passwd\"\n"), "/etc/passwd");
  EXPECT_EQ(literal_include_outside("int x;\n  #  include </root/.ssh/id_rsa>\n"),
            "/root/.ssh/id_rsa");
  EXPECT_EQ(literal_include_outside("#include_next \"../../secret.h\"\n"), "../../secret.h");
  EXPECT_EQ(literal_include_outside("%:include \"/proc/self/environ\"\n"), "/proc/self/environ");
  EXPECT_EQ(literal_include_outside("#import \"a/../../b.h\"\n"), "a/../../b.h");
  EXPECT_EQ(literal_include_outside("#include <vector>\n#include \"kforge/kernel.h\"\n"),
            std::nullopt);
  EXPECT_EQ(literal_include_outside("// #include \"/etc/passwd\" in a comment line\n"),
            std::nullopt);
  EXPECT_EQ(literal_include_outside("#include \"a..b.h\"\n"), std::nullopt);
}

TEST(CompilerOutput, HeaderListIsTakenOutAndChecked) {
  const std::string raw =
      ". /usr/include/stdio.h\n"
      ".. /usr/include/x86_64-linux-gnu/bits/types.h\n"
      ". /etc/hostname\n"
      "Multiple include guards may be useful for:\n"
      "/usr/include/a.h\n"
      "candidate.cpp:3:1: error: expected ';'\n";
  SanitizedLog s = sanitize_compiler_log(raw, policy());
  ASSERT_EQ(s.refused_includes.size(), 1u);
  EXPECT_EQ(s.refused_includes[0], "/etc/hostname");
  EXPECT_EQ(s.log, "candidate.cpp:3:1: error: expected ';'\n");
}

TEST(CompilerOutput, DiagnosticsInOtherFilesAreWithheldWithTheirEcho) {
  const std::string raw =
      "In file included from candidate.cpp:2:\n"
      "/etc/passwd:1:1: error: 'root' does not name a type\n"
      "    1 | root:x:0:0:root:/root:/bin/bash\n"
      "      | ^~~~\n"
      "/etc/passwd:2:1: error: 'daemon' does not name a type\n"
      "daemon:x:1:1:daemon\n"  // clang echoes the line without a gutter
      "/etc/passwd: In function 'int secret()':\n"
      "candidate.cpp:5:3: error: 'y' was not declared in this scope\n"
      "    5 |   y = 1;\n";
  SanitizedLog s = sanitize_compiler_log(raw, policy());
  EXPECT_EQ(s.log.find("root"), std::string::npos) << s.log;
  EXPECT_EQ(s.log.find("daemon"), std::string::npos) << s.log;
  EXPECT_EQ(s.log.find("secret"), std::string::npos) << s.log;
  EXPECT_NE(s.log.find("withheld"), std::string::npos) << s.log;
  EXPECT_NE(s.log.find("candidate.cpp:5:3: error: 'y' was not declared"), std::string::npos);
  EXPECT_NE(s.log.find("    5 |   y = 1;"), std::string::npos) << s.log;
}

TEST(CompilerOutput, LinesDiagnosticsAndTheLogAreCapped) {
  std::string raw =
      "candidate.cpp:1:1: note: '#pragma message: " + std::string(100000, 'A') + "'\n";
  for (int i = 0; i < 20; ++i) raw += "context line " + std::to_string(i) + "\n";
  SanitizedLog s = sanitize_compiler_log(raw, policy());
  EXPECT_LT(s.log.size(), kMaxLineBytes + 30 * 40) << s.log.size();
  EXPECT_NE(s.log.find("[...]"), std::string::npos);
  EXPECT_NE(s.log.find("context line 5"), std::string::npos);
  EXPECT_EQ(s.log.find("context line 6"), std::string::npos) << s.log;
  EXPECT_NE(s.log.find("more lines of this diagnostic cut"), std::string::npos);

  std::string many;
  for (int i = 0; i < 5000; ++i) many += "candidate.cpp:" + std::to_string(i) + ":1: error: e\n";
  SanitizedLog t = sanitize_compiler_log(many, policy());
  EXPECT_LE(t.log.size(), kMaxLogBytes + 100);
  EXPECT_NE(t.log.find("cut at"), std::string::npos);
  EXPECT_LE(parse_diagnostics(many).size(), kMaxDiagnostics);
}

TEST(CompilerOutput, TerminalEscapesAndInvalidUtf8NeverReachTheLog) {
  const std::string raw =
      "candidate.cpp:2:9: note: '#pragma message: \x1b]0;owned\x07 \xff\xfe \xc3\xa9 "
      "\xed\xa0\x80'\n";
  SanitizedLog s = sanitize_compiler_log(raw, policy());
  EXPECT_EQ(s.log.find('\x1b'), std::string::npos);
  EXPECT_EQ(s.log.find('\x07'), std::string::npos);
  EXPECT_NE(s.log.find("\xc3\xa9"), std::string::npos);  // valid UTF-8 is kept
  EXPECT_NO_THROW((void)nlohmann::json(s.log).dump()) << s.log;
}

TEST(CompilerOutput, ValidUtf8) {
  EXPECT_EQ(valid_utf8("plain"), "plain");
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(valid_utf8("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");  // overlong
  EXPECT_EQ(valid_utf8("\xe2\x82"), "\xef\xbf\xbd");              // truncated
  EXPECT_EQ(valid_utf8("\xf0\x9f\x98\x80"), "\xf0\x9f\x98\x80");  // U+1F600
  EXPECT_EQ(valid_utf8(std::string("a\0b", 3)), "ab");
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  EXPECT_NO_THROW((void)nlohmann::json(valid_utf8(all)).dump());
}

TEST(CompilerOutput, ParseDiagnostics) {
  auto d = parse_diagnostics(
      "a.cpp:3:7: error: expected ';'\nnoise\nb.cpp:10:1: warning: unused\n"
      "c:d.cpp:4: fatal error: x.h: No such file or directory\n"
      "/usr/bin/ld: x.o: undefined reference to `foo'\n"
      "big.cpp:99999999999999999999:1: error: saturates\n");
  ASSERT_EQ(d.size(), 5u);
  EXPECT_EQ(d[0].file, "a.cpp");
  EXPECT_EQ(d[0].line, 3);
  EXPECT_EQ(d[0].column, 7);
  EXPECT_EQ(d[1].severity, "warning");
  EXPECT_EQ(d[2].file, "c:d.cpp");
  EXPECT_EQ(d[2].severity, "error");
  EXPECT_EQ(d[2].message, "x.h: No such file or directory");
  EXPECT_EQ(d[3].file, "");
  EXPECT_EQ(d[3].severity, "error");
  EXPECT_EQ(d[4].line, 1'000'000'000);
}

// Lines built to make a backtracking matcher explode take linear time here.
TEST(CompilerOutput, HostileLinesParseInLinearTime) {
  const std::string colons(1 << 20, ':');
  std::string digits;
  for (int i = 0; i < 100000; ++i) digits += ":12";
  const std::string one_line = "x" + std::string(4 << 20, 'a') + ":1:2: error: long\n";
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(parse_diagnostics(colons).empty());
  EXPECT_TRUE(parse_diagnostics(digits).empty());
  EXPECT_EQ(parse_diagnostics(one_line).size(), 1u);
  (void)sanitize_compiler_log(colons + "\n" + digits + "\n" + one_line, policy());
  EXPECT_EQ(literal_include_outside(std::string(1 << 20, '#')), std::nullopt);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(s, 2.0);
}

TEST(CompilerOutput, SystemIncludeDirsComeFromTheCompiler) {
  auto dirs = system_include_dirs("g++");
  ASSERT_FALSE(dirs.empty());
  bool usr_include = false;
  for (const auto& d : dirs) usr_include |= d == "/usr/include";
  EXPECT_TRUE(usr_include);
}

}  // namespace
}  // namespace kf
