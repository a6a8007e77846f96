// One edit of each field of a task, applied to a copy of tests/check_tasks/gemv_ok: the tests of
// the task identity (tests/adversarial/stale_task_identity_test) and of optimize after an edit
// (modes_optimize_task_edit_test) run every one of them.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_env.h"

namespace kf::task_edit {

namespace fs = std::filesystem;

inline fs::path fixture() {
  return testing::source_dir() / "tests/check_tasks/gemv_ok";
}

inline std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

inline void spit(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

// Replaces every occurrence of `from` in `dir/file`; the edit must find at least one.
inline void replace_all(const fs::path& dir, const std::string& file, const std::string& from,
                        const std::string& to) {
  std::string text = slurp(dir / file);
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << file << ": '" << from << "' not found";
  for (; at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  spit(dir / file, text);
}

// A fresh copy of the fixture (its files only) at `dir`.
inline void copy_fixture(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& e : fs::directory_iterator(fixture()))
    fs::copy_file(e.path(), dir / e.path().filename());
}

struct Edit {
  std::string field;                           // what the edit changes (the test's name)
  std::function<void(const fs::path&)> apply;  // edits the copy in place
  // The edit changes the naive candidate's source too (its signature or its loops), so a
  // recorded measurement of the original cannot be replayed for it.
  bool changes_candidate = false;
};

// gtest prints a parameter by its field.
inline void PrintTo(const Edit& e, std::ostream* os) {
  *os << e.field;
}

inline std::vector<Edit> every_field() {
  auto toml = [](std::string from, std::string to) {
    return [from, to](const fs::path& d) { replace_all(d, "task.toml", from, to); };
  };
  return {
      // The generated kernel names its task in its header comment.
      {"name", toml("name        = \"gemv_ok\"", "name        = \"gemv_renamed\""), true},
      {"category", toml("category    = \"gemv\"", "category    = \"matvec\"")},
      {"description", toml("description = \"y = A x (f32)\"", "description = \"y = A times x\"")},
      {"signature_dims",
       [](const fs::path& d) {
         // K becomes L everywhere it is named: the dims, the shapes, the sizes, the formulas.
         replace_all(d, "task.toml", "\"K\"", "\"L\"");
         replace_all(d, "task.toml", "K = ", "L = ");
         replace_all(d, "task.toml", "* K", "* L");
         replace_all(d, "task.toml", "+ K +", "+ L +");
         replace_all(d, "reference.cpp", "K", "L");
         replace_all(d, "baseline.cpp", "K", "L");
       },
       true},
      {"signature_input_dtype",
       [](const fs::path& d) {
         replace_all(d, "task.toml", "dtype       = \"f32\"", "dtype       = \"f64\"");
         replace_all(d, "task.toml", "dtype = \"f32\"", "dtype = \"f64\"");
         replace_all(d, "task.toml", "f32 = {", "f64 = {");
         replace_all(d, "baseline.cpp", "float", "double");
       },
       true},
      {"te_spec", toml("y[m] = sum(k: A[m, k] * x[k])", "y[m] = sum(j: A[m, j] * x[j])"), true},
      {"bench_shape", toml("bench = { M = 256, K = 512 }", "bench = { M = 16384, K = 512 }")},
      {"test_shapes", toml("{ M = 33, K = 100 } ]", "{ M = 33, K = 100 }, { M = 2, K = 1000 } ]")},
      {"input_distribution",
       toml("dist = { kind = \"normal\", std = 1.0 }", "dist = { kind = \"normal\", std = 4.0 }")},
      {"tolerance", toml("rtol = 1e-4", "rtol = 2e-4")},
      {"flops_formula", toml("flops = \"2 * M * K\"", "flops = \"2 * M * K + M\"")},
      {"bytes_formula", toml("bytes = \"4 * (M * K + K + M)\"", "bytes = \"4 * (M * K + K)\"")},
      {"baseline_source",
       [](const fs::path& d) { replace_all(d, "baseline.cpp", "s0 + s1", "s1 + s0"); }},
      {"baseline_file",
       [](const fs::path& d) {
         fs::rename(d / "baseline.cpp", d / "baseline_v2.cpp");
         replace_all(d, "task.toml", "file = \"baseline.cpp\"", "file = \"baseline_v2.cpp\"");
       }},
      {"baseline_libs", toml("libs = [\"m\"]", "libs = []")},
      {"baseline_name", toml("name = \"four fused partial sums\"", "name = \"fused sums\"")},
      {"baseline_removed",
       [](const fs::path& d) {
         std::string text = slurp(d / "task.toml");
         text.erase(text.find("[baseline]"));
         spit(d / "task.toml", text);
         fs::remove(d / "baseline.cpp");
       }},
      {"reference_source",
       [](const fs::path& d) { replace_all(d, "reference.cpp", "Acc s = 0;", "Acc s = Acc(0);"); }},
      // By content, not by meaning: a comment or a blank line gives a new identity as well.
      {"task_toml_comment",
       [](const fs::path& d) { spit(d / "task.toml", "# edited\n" + slurp(d / "task.toml")); }},
      {"task_toml_whitespace", toml("[shapes]\n", "[shapes]\n\n")},
  };
}

}  // namespace kf::task_edit
