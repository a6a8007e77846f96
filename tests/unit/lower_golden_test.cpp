// Runs the golden files in tests/golden/lower/*.golden: a TE spec and a schedule in, the
// expected lowering out. A golden file reads as the spec:
//
//   # a vectorized GEMM: the j tail is one masked vector
//   task: bench/jaxbench/08_gemm            signature and shapes come from this task
//   te: C[i, j] = sum(k: A[i, k] * B[k, j]) optional; replaces the task's spec (several lines ok)
//   vectorize C.j 16                        the schedule: every other non-comment line
//   // CHECK-STAGES: loops: i j(vectorized 16) k     substrings of the scheduled stages, in order
//   // CHECK-IR: vectorized for (C.j.vec, 0, 16)      ... of the final IR, in order
//   // CHECK: kf_store_f32x16_masked(                 ... of the generated C++, in order
//   // CHECK-NOT: __builtin_logf                      ... nowhere in the generated C++
//   // ERROR: g.golden:4: cannot vectorize C.k: ...   must-fail: the exact error
//
// Schedule errors carry the golden file's name and line numbers, so an ERROR line reads
// exactly as a user would see it.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "codegen/codegen_cpp.h"
#include "ir/ir_printer.h"
#include "lower_test_util.h"
#include "support/fs.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

struct Check {
  std::string kind;  // "CHECK", "CHECK-IR", "CHECK-STAGES"
  std::string text;
  int line = 0;
};

struct Golden {
  std::string file;  // base name, as used in messages
  std::string task;
  std::vector<std::string> te;
  std::string schedule;  // the golden text with every non-schedule line blanked
  std::vector<Check> checks;
  std::string error;
  bool has_error = false;
};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

Golden parse_golden(const fs::path& path) {
  Golden g;
  g.file = path.filename().string();
  auto text = read_file(path);
  KF_CHECK(text.has_value()) << text.error().message();
  std::istringstream in(*text);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    const std::string t = trim(line);
    bool schedule_line = false;
    if (t.rfind("task:", 0) == 0) {
      g.task = trim(t.substr(5));
    } else if (t.rfind("te:", 0) == 0) {
      g.te.push_back(trim(t.substr(3)));
    } else if (t.rfind("//", 0) == 0) {
      const std::string body = trim(t.substr(2));
      const size_t colon = body.find(':');
      KF_CHECK(colon != std::string::npos) << g.file << ":" << n << ": expected '// KIND: text'";
      const std::string kind = body.substr(0, colon), rest = trim(body.substr(colon + 1));
      if (kind == "ERROR") {
        g.error = rest;
        g.has_error = true;
      } else {
        KF_CHECK(kind == "CHECK" || kind == "CHECK-IR" || kind == "CHECK-STAGES" ||
                 kind == "CHECK-NOT")
            << g.file << ":" << n << ": unknown check kind " << kind;
        g.checks.push_back({kind, rest, n});
      }
    } else {
      schedule_line = true;
    }
    g.schedule += (schedule_line ? line : "") + "\n";
  }
  KF_CHECK(!g.task.empty()) << g.file << ": no 'task:' line";
  return g;
}

// Finds each check's text in `out` after the previous one; returns the first failure or "".
std::string run_checks(const Golden& g, const std::string& kind, const std::string& out) {
  size_t pos = 0;
  for (const Check& c : g.checks) {
    if (c.kind != kind) continue;
    size_t at = out.find(c.text, pos);
    if (at == std::string::npos)
      return g.file + ":" + std::to_string(c.line) + ": " + kind +
             " not found (in order): " + c.text + "\n--- output:\n" + out;
    pos = at + c.text.size();
  }
  return "";
}

// The CHECK-NOT texts found anywhere in `out`; "" if none.
std::string run_absent(const Golden& g, const std::string& out) {
  for (const Check& c : g.checks)
    if (c.kind == "CHECK-NOT" && out.find(c.text) != std::string::npos)
      return g.file + ":" + std::to_string(c.line) + ": CHECK-NOT found: " + c.text;
  return "";
}

std::vector<fs::path> golden_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(testing::source_dir() / "tests/golden/lower"))
    if (e.path().extension() == ".golden") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

class LowerGolden : public ::testing::TestWithParam<fs::path> {};

TEST_P(LowerGolden, Matches) {
  const Golden g = parse_golden(GetParam());
  Task task = testing::task_at(g.task);
  if (!g.te.empty()) {
    task.te_spec.clear();
    for (const std::string& l : g.te) task.te_spec += l + "\n";
  }
  auto program = te::compile_spec(task);
  ASSERT_TRUE(program.has_value()) << program.error().message();

  std::string error;
  auto schedule = sched::parse_schedule(g.schedule, g.file);
  std::string stages, ir, cpp;
  if (!schedule) {
    error = schedule.error().message();
  } else {
    LowerOptions o;
    o.dump = [&](const std::string& pass, const std::string& text) {
      if (pass == "apply_schedule") stages = text;
    };
    auto f = lower(task, *program, *schedule, o);
    if (!f) {
      error = f.error().message();
    } else {
      ir = ir::to_string(*f);
      cpp = codegen_cpp(*f, CodegenTarget::avx512);
    }
  }
  if (g.has_error) {
    EXPECT_EQ(error, g.error) << g.file;
    return;
  }
  ASSERT_EQ(error, "") << g.file;
  EXPECT_EQ(run_checks(g, "CHECK-STAGES", stages), "");
  EXPECT_EQ(run_checks(g, "CHECK-IR", ir), "");
  EXPECT_EQ(run_checks(g, "CHECK", cpp), "");
  EXPECT_EQ(run_absent(g, cpp), "");
}

INSTANTIATE_TEST_SUITE_P(Files, LowerGolden, ::testing::ValuesIn(golden_files()),
                         [](const auto& info) {
                           std::string n = info.param.stem().string();
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace kf
