#include "harness/compiler_jail.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "support/fs.h"

namespace kf {
namespace {

std::unique_ptr<BuildDir> build_dir() {
  auto d = BuildDir::make();
  EXPECT_TRUE(d) << d.error().message();
  return d ? std::move(*d) : nullptr;
}

TEST(CompilerJail, TheEnvironmentIsOnlyTheFixedOne) {
  ASSERT_EQ(setenv("KF_JUDGE_SECRET", "leaked", 1), 0);
  auto dir = build_dir();
  ASSERT_TRUE(dir);
  auto r = run_compiler({resolve_program("env")}, dir->path(), {.timeout_s = 10});
  unsetenv("KF_JUDGE_SECRET");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->ok()) << r->err;
  EXPECT_EQ(r->out.find("KF_JUDGE_SECRET"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("LC_ALL=C\n"), std::string::npos) << r->out;
  EXPECT_NE(r->out.find("TMPDIR=" + dir->path().string() + "\n"), std::string::npos) << r->out;
  size_t lines = 0;
  for (char c : r->out) lines += c == '\n';
  EXPECT_EQ(lines, 3u) << r->out;
}

TEST(CompilerJail, StdinIsEmpty) {
  auto dir = build_dir();
  ASSERT_TRUE(dir);
  auto r = run_compiler({resolve_program("cat")}, dir->path(), {.timeout_s = 10});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->out, "");
}

TEST(CompilerJail, FilesAreCappedAndOnlyTheBuildDirIsWritable) {
  auto dir = build_dir();
  ASSERT_TRUE(dir);
  auto file = run_compiler({resolve_program("sh"), "-c", "head -c 4194304 /dev/zero > out.bin"},
                           dir->path(), {.timeout_s = 10, .max_file_bytes = size_t{1} << 20});
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_FALSE(file->ok());
  std::error_code ec;
  EXPECT_LE(fs::file_size(dir->path() / "out.bin", ec), size_t{1} << 20);

  TempDir outside("kforge-jail-outside");
  auto escape = run_compiler(
      {resolve_program("sh"), "-c", "echo x > " + (outside.path() / "escaped").string()},
      dir->path(), {.timeout_s = 10});
  ASSERT_TRUE(escape) << escape.error().message();
  EXPECT_FALSE(escape->ok());
  EXPECT_FALSE(fs::exists(outside.path() / "escaped"));
}

TEST(CompilerJail, TheWallClockEndsIt) {
  auto dir = build_dir();
  ASSERT_TRUE(dir);
  auto r = run_compiler({resolve_program("sleep"), "30"}, dir->path(), {.timeout_s = 0.5});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->timed_out);
  EXPECT_LT(r->seconds, 5);
}

TEST(CompilerJail, TheBuildDirGoesWithItsObject) {
  fs::path p;
  {
    auto dir = build_dir();
    ASSERT_TRUE(dir);
    p = dir->path();
    ASSERT_TRUE(write_file_atomic(p / "a" / "b.txt", "x").ok());
    EXPECT_TRUE(fs::exists(p / "a" / "b.txt"));
  }
  EXPECT_FALSE(fs::exists(p));
}

TEST(CompilerJail, ProgramsResolveToAbsolutePaths) {
  EXPECT_TRUE(fs::path(resolve_program("g++")).is_absolute());
  EXPECT_EQ(resolve_program("no-such-program-kf"), "no-such-program-kf");
  EXPECT_EQ(compiler_env("/tmp/x", "/opt/cc/bin/g++").front(),
            "PATH=/opt/cc/bin:/usr/local/bin:/usr/bin:/bin");
}

// A toolchain installed outside the system trees (/opt/gcc-14/bin/g++): its compile may read and
// run what is under its prefix, and nothing else there.
TEST(CompilerJail, AToolchainOutsideTheSystemTreesRunsFromItsPrefix) {
  EXPECT_EQ(toolchain_prefix(resolve_program("sh")), std::nullopt) << "a system tree already";
  EXPECT_EQ(toolchain_prefix("/opt/cc"), std::nullopt) << "never a top-level tree";
  EXPECT_EQ(toolchain_prefix("/no/such/cc"), std::nullopt);

  TempDir tc("kforge-toolchain");
  fs::permissions(tc.path(), fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                 fs::perms::others_read | fs::perms::others_exec);
  const fs::path bin = tc.path() / "bin", libexec = tc.path() / "libexec";
  fs::create_directories(bin);
  fs::create_directories(libexec);
  // The "driver" (a copy of env) runs a program of its own from its prefix (a copy of cat),
  // which reads a file there.
  fs::copy_file(resolve_program("env"), bin / "cc");
  fs::copy_file(resolve_program("cat"), libexec / "cc1");
  ASSERT_TRUE(write_file_atomic(libexec / "data.txt", "from the prefix\n").ok());
  for (const fs::path& p : {libexec / "cc1", bin / "cc", libexec / "data.txt"})
    fs::permissions(p, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  for (const fs::path& d : {bin, libexec})
    fs::permissions(d, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  EXPECT_EQ(toolchain_prefix((bin / "cc").string()), fs::canonical(tc.path()));

  auto dir = build_dir();
  ASSERT_TRUE(dir);
  auto r = run_compiler(
      {(bin / "cc").string(), (libexec / "cc1").string(), (libexec / "data.txt").string()},
      dir->path(), {.timeout_s = 10});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_TRUE(r->ok()) << r->err;
  EXPECT_EQ(r->out, "from the prefix\n");

  // Beside the prefix, nothing more: a file next to it stays unreadable.
  TempDir other("kforge-not-toolchain");
  fs::permissions(other.path(),
                  fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
  ASSERT_TRUE(write_file_atomic(other.path() / "secret", "no").ok());
  fs::permissions(other.path() / "secret", fs::perms::owner_all | fs::perms::others_read);
  auto denied = run_compiler({resolve_program("cat"), (other.path() / "secret").string()},
                             dir->path(), {.timeout_s = 10});
  ASSERT_TRUE(denied) << denied.error().message();
  EXPECT_FALSE(denied->ok());
  EXPECT_EQ(denied->out, "");
}

}  // namespace
}  // namespace kf
