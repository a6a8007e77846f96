// Must-fail tests for malformed tasks through `kforge check`: each kind of defect gets exit
// status 1 or 2 and a message that names the file, where useful the line, and what was expected.
// Each case is a copy of the small rmsnorm task with one defect.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void replace_once(std::string& s, const std::string& from, const std::string& to) {
  auto i = s.find(from);
  ASSERT_NE(i, std::string::npos) << from;
  s.replace(i, from.size(), to);
}

struct Defect {
  std::string name;
  std::string file;        // "task.toml" or "reference.cpp"
  std::string from, to;    // the edit that breaks it
  std::string expected;    // part of the error output
};

class MalformedTask : public ::testing::TestWithParam<Defect> {};

TEST_P(MalformedTask, CheckRefusesItWithItsError) {
  const Defect& d = GetParam();
  const fs::path src = testing::source_dir() / "bench/jaxbench/12_rmsnorm";
  const fs::path dir = fs::temp_directory_path() / ("kforge-malformed-" + d.name + "-" +
                                                    std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"task.toml", "reference.cpp", "baseline.cpp"})
    fs::copy_file(src / f, dir / f);
  std::string text = slurp(dir / d.file);
  replace_once(text, d.from, d.to);
  std::ofstream(dir / d.file) << text;

  auto r = run_process({.argv = {std::getenv("KFORGE_BIN"), "check", dir.string()},
                        .timeout_s = 300});
  ASSERT_TRUE(r);
  EXPECT_NE(r->exit_code, 0);
  const std::string all = r->out + r->err;
  EXPECT_NE(all.find(d.expected), std::string::npos) << all;
  if (std::getenv("KFORGE_SHOW_ERRORS")) std::fprintf(stderr, "%s: %s\n", d.name.c_str(), all.c_str());
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, MalformedTask,
    ::testing::Values(
        Defect{"bad_signature", "task.toml", R"(shape = ["N", "D"], dist)",
               R"(shape = ["N", "Q"], dist)",
               "task.toml:20:1: formula 'Q' uses 'Q', which is not a dim"},
        Defect{"shape_formula_error", "task.toml", R"(flops = "4 * N * D + 4 * N")",
               R"(flops = "4 * N * * D")",
               "task.toml:52:9: bad formula '4 * N * * D' in 'flops': column 9: unexpected '*'"},
        Defect{"tolerance_missing", "task.toml", "f32 = { rel_l2 = 1e-5, atol = 1e-6, rtol = 1e-5 }",
               "", "task.toml:45:1: no tolerance for the task's dtype f32"},
        Defect{"reference_does_not_compile", "reference.cpp", "for (int64_t n = 0;",
               "for (int64_t n = 0 oops;",
               "the reference at f32 gets 'compile_error'"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kf
