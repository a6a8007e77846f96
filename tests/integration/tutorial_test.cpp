// docs/tutorial.md run as a test, with its own files (docs/tutorial/): a plain C++ function that
// is not in the suite (a row-wise softmax) becomes a task with `kforge new`; `kforge check` lists
// the placeholders; the filled task.toml the tutorial ends with is written over the skeleton and
// `check` passes; `kforge optimize` finds a kernel faster than the reference; `kforge export`
// writes it; and the tutorial's demo project (CMake + Ninja) builds against the export and runs
// a program that checks the kernel against the original function, and fails when one output
// element is perturbed.
//
// The page cannot drift from the tool: the commands run in a folder laid out as the tutorial's,
// with its relative paths, so what `new` and `check` print is compared with the page verbatim;
// the skeleton, the converted reference and the demo's files must appear on the page as they are;
// and the filled task.toml must be the skeleton line for line, with only the "TODO"s filled and
// the [te] block written.
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;

const fs::path kTutorial = testing::source_dir() / "docs/tutorial";

std::string slurp(const fs::path& p) {
  auto t = read_file(p);
  return t ? *t : std::string();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Runs a command in `cwd` (kforge's own binary for argv[0] == "kforge").
ProcessResult run_in(const fs::path& cwd, std::vector<std::string> argv, double timeout_s = 300) {
  if (argv[0] == "kforge") argv[0] = testing::kforge_bin();
  auto r = run_process({.argv = std::move(argv), .cwd = cwd.string(), .timeout_s = timeout_s});
  KF_CHECK(r.has_value()) << r.error().message();
  return *r;
}

// True when `line` is `pattern` with each "TODO" placeholder (quotes included) replaced by some
// text other than a placeholder. A comment holds no placeholder: it must stay as it is.
bool fills(const std::string& pattern, const std::string& line) {
  if (pattern.starts_with("#")) return line == pattern;
  const std::string hole = "\"TODO\"";
  std::vector<std::string> pieces;
  size_t from = 0;
  for (size_t at; (at = pattern.find(hole, from)) != std::string::npos; from = at + hole.size())
    pieces.push_back(pattern.substr(from, at - from));
  pieces.push_back(pattern.substr(from));
  if (pieces.size() == 1) return line == pattern;
  if (contains(line, hole) || !line.starts_with(pieces.front())) return false;
  size_t pos = pieces.front().size();
  for (size_t i = 1; i + 1 < pieces.size(); ++i) {
    const size_t at = line.find(pieces[i], pos + 1);
    if (at == std::string::npos) return false;
    pos = at + pieces[i].size();
  }
  return line.size() >= pos + 1 + pieces.back().size() && line.ends_with(pieces.back());
}

// The filled task.toml is the skeleton line for line up to its commented-out [te] block and
// from its [baseline] block on, with every placeholder filled; between them, the [te] section.
// Returns the filled lines that are not the skeleton's (the ones the tutorial shows).
std::vector<std::string> expect_filled_skeleton(const std::string& skeleton,
                                                const std::string& filled) {
  const std::vector<std::string> s = lines_of(skeleton), f = lines_of(filled);
  auto index_of = [](const std::vector<std::string>& v, const std::string& prefix) {
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i].starts_with(prefix)) return i;
    return v.size();
  };
  const size_t te = index_of(s, "# [te]"), baseline = index_of(s, "# [baseline]");
  EXPECT_LT(te, baseline) << skeleton;
  EXPECT_GE(f.size(), s.size() - (baseline - te)) << filled;
  if (te >= baseline || f.size() < s.size() - (baseline - te)) return {};
  std::vector<std::string> changed;
  for (size_t i = 0; i < te; ++i) {
    EXPECT_TRUE(fills(s[i], f[i]))
        << "skeleton line " << i + 1 << ":\n  " << s[i] << "\nfilled:\n  " << f[i];
    if (s[i] != f[i]) changed.push_back(f[i]);
  }
  const size_t tail = s.size() - baseline, f_tail = f.size() - tail;
  for (size_t i = 0; i < tail; ++i)
    EXPECT_EQ(f[f_tail + i], s[baseline + i]) << "the skeleton's end, line " << baseline + i + 1;
  for (size_t i = te; i < f_tail; ++i) changed.push_back(f[i]);
  for (const std::string& line : f)
    EXPECT_TRUE(line.starts_with("#") || !contains(line, "\"TODO\"")) << line;
  EXPECT_TRUE(contains(filled, "\n[te]\n")) << filled;
  return changed;
}

TEST(Tutorial, FromAPlainFunctionToAnExportedFasterKernel) {
  const std::string doc = slurp(testing::source_dir() / "docs/tutorial.md");
  ASSERT_FALSE(doc.empty());
  const fs::path work = testing::process_temp_dir("kf_tutorial");
  const std::string function = slurp(kTutorial / "softmax_rows.cpp");
  ASSERT_TRUE(write_file_atomic(work / "softmax_rows.cpp", function).ok());
  EXPECT_TRUE(contains(doc, "```cpp\n" + function + "```")) << "the page shows the function";

  // kforge new: the skeleton, as the page shows it.
  ProcessResult made = run_in(work, {"kforge", "new", "softmax", "--from", "softmax_rows.cpp"});
  ASSERT_EQ(made.exit_code, 0) << describe(made);
  EXPECT_TRUE(
      contains(made.out, "function softmax_rows (f32): inputs x; outputs y; dims rows, cols"))
      << made.out;
  EXPECT_TRUE(contains(doc, "```\n" + made.out + "```")) << "kforge new printed:\n" << made.out;
  const std::string skeleton = slurp(work / "softmax/task.toml");
  EXPECT_TRUE(contains(doc, "```toml\n" + skeleton + "```")) << "the skeleton:\n" << skeleton;
  const std::string reference = slurp(work / "softmax/reference.cpp");
  EXPECT_EQ(reference, slurp(kTutorial / "softmax/reference.cpp"))
      << "the tutorial keeps kforge new's reference unchanged";
  EXPECT_TRUE(contains(doc, "```cpp\n" + reference + "```"));

  // kforge check on the skeleton: one line per placeholder, nothing judged.
  ProcessResult todo = run_in(work, {"kforge", "check", "softmax"});
  EXPECT_EQ(todo.exit_code, 1) << describe(todo);
  for (const char* field :
       {"softmax/task.toml:20: [signature] input 'x': no shape yet",
        "softmax/task.toml:23: [signature] output 'y': no shape yet",
        "[shapes] bench: no value yet for rows, cols", "[shapes] tests: no value yet",
        "[cost] flops: no formula yet", "[cost] bytes: no formula yet", "6 to fill in"})
    EXPECT_TRUE(contains(todo.out, field)) << field << "\n" << describe(todo);
  EXPECT_TRUE(contains(doc, "```\n" + todo.out + "```")) << "kforge check printed:\n" << todo.out;

  // The tutorial's filled task.toml is this skeleton, filled; the lines it changes are shown.
  const std::string filled = slurp(kTutorial / "softmax/task.toml");
  for (const std::string& line : expect_filled_skeleton(skeleton, filled))
    EXPECT_TRUE(contains(doc, "\n" + line + "\n")) << "the page does not show:\n" << line;
  ASSERT_TRUE(write_file_atomic(work / "softmax/task.toml", filled).ok());

  ProcessResult passed = run_in(work, {"kforge", "check", "softmax"});
  ASSERT_EQ(passed.exit_code, 0) << describe(passed);
  EXPECT_TRUE(contains(passed.out, "pass    te        tests")) << passed.out;
  EXPECT_TRUE(contains(passed.out, "pass    reference bench")) << passed.out;

  // kforge optimize, as the page runs it, with the store and the outputs in this folder.
  const std::string store = (work / "runs.db").string();
  ProcessResult optimized = run_in(work, {"kforge", "optimize", "softmax", "--budget-evals", "6",
                                          "--min-time", "0.02", "--store", store, "--out", "out"});
  ASSERT_EQ(optimized.exit_code, 0) << describe(optimized);
  EXPECT_TRUE(contains(doc, "kforge optimize softmax --budget-evals 6 --min-time 0.02\n"));
  EXPECT_TRUE(contains(optimized.out + optimized.err, "[  1/6] baseline")) << describe(optimized);
  const auto summary = nlohmann::json::parse(slurp(work / "out/summary.json"));
  EXPECT_EQ(summary["final"]["verdict"], "ok") << summary.dump(1);
  EXPECT_EQ(summary["best"]["kind"], "generated") << summary.dump(1);
  const double speedup = summary["final"]["vs_reference"]["median"].get<double>();
  std::cout << "tutorial: the best kernel is " << speedup
            << "x the reference (median, side by side)\n";
  EXPECT_GT(speedup, 1.2) << "the tutorial promises a faster kernel:\n" << optimized.out;

  // kforge runs --json names the run; show and export take a prefix of its id.
  ProcessResult runs = run_in(work, {"kforge", "runs", "--json", "--store", store});
  ASSERT_TRUE(runs.ok()) << describe(runs);
  const auto listed = nlohmann::json::parse(runs.out)["runs"];
  ASSERT_EQ(listed.size(), 1u) << runs.out;
  EXPECT_EQ(listed[0]["state"], "finished");
  const std::string id = listed[0]["id"];
  const std::string prefix = id.substr(0, 14);  // "r20261206-2254", as the page writes it
  ProcessResult shown = run_in(work, {"kforge", "show", prefix, "--store", store});
  EXPECT_TRUE(shown.ok()) << describe(shown);
  EXPECT_TRUE(contains(shown.out, "speedup over the reference")) << shown.out;

  ProcessResult exported = run_in(work, {"kforge", "export", prefix, "--store", store, "-o",
                                         "kernels/softmax", "--namespace", "fast"});
  ASSERT_TRUE(exported.ok()) << describe(exported);
  EXPECT_TRUE(contains(exported.out, "exported softmax_rows from run " + id)) << exported.out;
  const std::string header = slurp(work / "kernels/softmax/softmax_rows.h");
  EXPECT_TRUE(contains(header,
                       "namespace fast {\n\nvoid softmax_rows(const float* x, float* y, "
                       "int64_t rows, int64_t cols);"))
      << header;

  // The demo project, built from docs/tutorial/demo against the export.
  const std::string cmake_lists = slurp(kTutorial / "demo/CMakeLists.txt");
  const std::string main_cpp = slurp(kTutorial / "demo/main.cpp");
  EXPECT_TRUE(contains(doc, "```cmake\n" + cmake_lists + "```"));
  EXPECT_TRUE(contains(doc, "```cpp\n" + main_cpp + "```"));
  const fs::path build = work / "demo-build";
  ProcessResult conf = run_in(
      work, {"cmake", "-S", (kTutorial / "demo").string(), "-B", build.string(), "-G", "Ninja",
             "-DCMAKE_BUILD_TYPE=Release", "-DKERNEL_DIR=" + (work / "kernels/softmax").string()});
  ASSERT_TRUE(conf.ok()) << describe(conf);
  ProcessResult built = run_in(work, {"cmake", "--build", build.string(), "-j2"});
  ASSERT_TRUE(built.ok()) << describe(built);

  const std::string demo = (build / "softmax_demo").string();
  ProcessResult agreed = run_in(work, {demo});
  EXPECT_EQ(agreed.exit_code, 0) << describe(agreed);
  EXPECT_TRUE(agreed.out.starts_with("OK: the exported kernel agrees with the original"))
      << agreed.out;
  std::cout << "tutorial demo: " << agreed.out;
  ProcessResult perturbed = run_in(work, {demo, "--perturb"});
  EXPECT_EQ(perturbed.exit_code, 1) << describe(perturbed);
  EXPECT_TRUE(contains(perturbed.out, "MISMATCH")) << perturbed.out;
}

}  // namespace
}  // namespace kf
