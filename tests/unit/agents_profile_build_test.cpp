#include <gtest/gtest.h>

#include <algorithm>

#include "agents/profile_build.h"
#include "support/test_env.h"

namespace kf::agents {
namespace {

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

TEST(ProfileBuild, FlagsCompileWithoutLinking) {
  auto f = profile_compile_flags("// kforge: flags -ffast-math\nint x;\n", "g++", true);
  ASSERT_TRUE(f.has_value()) << f.error().message();
  EXPECT_TRUE(has(*f, "-c"));
  EXPECT_TRUE(has(*f, "-O3"));
  EXPECT_TRUE(has(*f, "-march=native"));
  EXPECT_TRUE(has(*f, "-ffast-math"));
  EXPECT_TRUE(has(*f, "-fopt-info-vec-optimized"));
  EXPECT_TRUE(has(*f, "-fopt-info-vec-missed"));
  EXPECT_FALSE(has(*f, "-shared"));
  EXPECT_TRUE(std::none_of(f->begin(), f->end(),
                           [](const std::string& s) { return s.rfind("-Wl,", 0) == 0; }));
  auto clang = profile_compile_flags("int x;\n", "clang++", true);
  ASSERT_TRUE(clang.has_value());
  EXPECT_FALSE(has(*clang, "-fopt-info-vec-missed"));
  EXPECT_FALSE(profile_compile_flags("// kforge: flags -fplugin=x.so\n", "g++", true).has_value());
}

TEST(ProfileBuild, ReportAndDisassemblyOfTheReference) {
  auto task = load_task(testing::source_dir() / "bench/jaxbench/12_rmsnorm");
  ASSERT_TRUE(task.has_value()) << task.error().message();
  ProfileToolOutput out = run_profile_tools(*task, task->reference_source, {});
  ASSERT_TRUE(out.compiled) << out.report_error;
  EXPECT_EQ(out.report_error, "");
  EXPECT_EQ(out.disassembly_error, "");
  EXPECT_NE(out.compiler_output.find("candidate.cpp:"), std::string::npos);
  EXPECT_NE(out.compiler_output.find("loop vectorized"), std::string::npos);
  EXPECT_NE(out.disassembly.find("<kforge_bind("), std::string::npos);  // the judge's bind text

  ProfileToolOptions only_report;
  only_report.disassembly = false;
  out = run_profile_tools(*task, task->reference_source, only_report);
  EXPECT_TRUE(out.compiled);
  EXPECT_EQ(out.disassembly, "");
  EXPECT_EQ(out.disassembly_error, "");

  ProfileToolOptions none;
  none.compiler_report = false;
  none.disassembly = false;
  out = run_profile_tools(*task, task->reference_source, none);
  EXPECT_FALSE(out.compiled);
  EXPECT_EQ(out.command, "");
}

TEST(ProfileBuild, ToolFailuresAreData) {
  auto task = load_task(testing::source_dir() / "bench/jaxbench/12_rmsnorm");
  ASSERT_TRUE(task.has_value());
  ProfileToolOptions o;
  o.cxx = "clang++";
  o.disassembly = false;
  ProfileToolOutput out = run_profile_tools(*task, task->reference_source, o);
  EXPECT_NE(out.report_error.find("clang++ has no GCC-style vectorization report"),
            std::string::npos)
      << out.report_error;
  o = ProfileToolOptions{};
  o.timeout_s = 0.01;
  out = run_profile_tools(*task, task->reference_source, o);
  EXPECT_NE(out.report_error.find("timed out"), std::string::npos) << out.report_error;
  EXPECT_NE(out.disassembly_error.find("timed out"), std::string::npos);
}

}  // namespace
}  // namespace kf::agents
