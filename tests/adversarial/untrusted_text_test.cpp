// Adversarial class 6: the judge's own readers of untrusted text. Each case is a copy of the
// tests/check_tasks/gemv_ok task with one hostile edit (task.toml, its TE spec, its formulas, its
// shapes) or a hostile schedule, given to the real binary (`kforge check`, `kforge lower`) the way
// a user would. What every case must show, whatever the text:
//   - kforge exits with an error status and says what is wrong: no signal (stack overflow, abort
//     from an uncaught exception), no hang, no allocation until the OOM killer comes;
//   - it answers in seconds (the bounds are checked before the work, not after);
//   - what it prints is bounded (a 100 KB key is quoted in 80 bytes) and valid UTF-8.
// The candidate's own text (compiler input, diagnostics, the worker's output) is class 6 as well:
// those cases are judged through the corpus runner (untrusted_text.toml, compiler.toml).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "support/json_text.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// `text` with the first `from` replaced by `to` (the case fails when `from` is missing).
std::string edit(std::string text, const std::string& from, const std::string& to) {
  const size_t i = text.find(from);
  EXPECT_NE(i, std::string::npos) << "the fixture no longer has '" << from << "'";
  if (i != std::string::npos) text.replace(i, from.size(), to);
  return text;
}

struct Case {
  std::string name;
  // The hostile task.toml, from the fixture's text.
  std::function<std::string(const std::string&)> task;
  // A hostile schedule for `kforge lower` (the task then is the fixture); empty: `kforge check`.
  std::function<std::string()> schedule;
  std::string expected;  // part of what kforge prints, case-insensitive
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.name;
}

std::string lower_case(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

constexpr double kAnswerWithin_s = 20;  // generous for a loaded CI machine; most answer in < 1 s
constexpr size_t kPrintedAtMost = 16 * 1024;

class UntrustedText : public ::testing::TestWithParam<Case> {};

TEST_P(UntrustedText, IsRefusedWithAShortClearErrorInSeconds) {
  const Case& c = GetParam();
  const fs::path fixture = testing::source_dir() / "tests/check_tasks/gemv_ok";
  const fs::path dir =
      fs::temp_directory_path() / ("kforge-untrusted-" + c.name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const char* f : {"reference.cpp", "baseline.cpp"}) fs::copy_file(fixture / f, dir / f);
  const std::string original = slurp(fixture / "task.toml");
  std::ofstream(dir / "task.toml", std::ios::binary) << (c.task ? c.task(original) : original);

  std::vector<std::string> argv = {std::getenv("KFORGE_BIN")};
  if (c.schedule) {
    std::ofstream(dir / "hostile.sched", std::ios::binary) << c.schedule();
    argv.insert(argv.end(), {"lower", dir.string(), "--schedule", (dir / "hostile.sched").string(),
                             "-o", (dir / "out.cpp").string()});
  } else {
    argv.insert(argv.end(), {"check", dir.string()});
  }
  auto r = run_process({.argv = argv, .timeout_s = 120, .max_output = 1 << 22});
  ASSERT_TRUE(r) << r.error().message();
  fs::remove_all(dir);

  EXPECT_FALSE(r->timed_out) << "kforge hung on it";
  EXPECT_EQ(r->signal, 0) << "kforge died of a signal: " << r->err.substr(0, 2000);
  EXPECT_NE(r->exit_code, 0) << "the hostile text was accepted";
  EXPECT_LT(r->seconds, kAnswerWithin_s) << "refused only after the work";
  const std::string all = r->out + r->err;
  EXPECT_LT(all.size(), kPrintedAtMost) << "the untrusted text was echoed back in full";
  EXPECT_TRUE(is_valid_utf8(all)) << "what kforge prints is UTF-8";
  EXPECT_NE(lower_case(all).find(lower_case(c.expected)), std::string::npos)
      << "expected '" << c.expected << "' in:\n"
      << all.substr(0, 4000);
}

const std::string kFlops = R"(flops = "2 * M * K")";
const std::string kSpec = "y[m] = sum(k: A[m, k] * x[k])";
const std::string kBench = "bench = { M = 256, K = 512 }";

// The cases' adders: a hostile task file, or a hostile schedule for the fixture.
struct Cases {
  std::vector<Case> out;
  void task(std::string name, std::function<std::string(const std::string&)> f,
            std::string expected) {
    out.push_back({std::move(name), std::move(f), nullptr, std::move(expected)});
  }
  void schedule(std::string name, std::function<std::string()> f, std::string expected) {
    out.push_back({std::move(name), nullptr, std::move(f), std::move(expected)});
  }
};

// Hostile task files: their own syntax and their formulas.
void task_file_cases(Cases& c) {
  auto task = [&](auto&&... a) { c.task(std::forward<decltype(a)>(a)...); };
  // --- the task file's own syntax -------------------------------------------------------------
  task(
      "toml_deep_arrays",
      [](const std::string& t) { return t + "x = " + repeat("[", 200000) + "]\n"; }, "task.toml");
  task(
      "toml_deep_inline_tables",
      [](const std::string& t) { return t + "x = " + repeat("{ a = ", 100000) + "1\n"; },
      "task.toml");
  task(
      "toml_huge_key", [](const std::string& t) { return t + repeat("k", 100000) + " = 1\n"; },
      "task.toml");
  task(
      "toml_invalid_utf8_and_nul",
      [](const std::string& t) {
        return edit(t, R"(name        = "gemv_ok")",
                    std::string("name = \"g\xff\xfe\x00\x1b[2J\"", 17));
      },
      "task.toml");
  task(
      "toml_dim_beyond_2_53",
      [](const std::string& t) {
        return edit(t, kBench, "bench = { M = 9007199254740993, K = 1 }");
      },
      "M");
  // --- formulas ---------------------------------------------------------------------------------
  task(
      "formula_nested_parens",
      [](const std::string& t) {
        return edit(t, kFlops,
                    "flops = \"" + repeat("(", 100000) + "M" + repeat(")", 100000) + "\"");
      },
      "flops");
  task(
      "formula_lone_dot", [](const std::string& t) { return edit(t, kFlops, R"(flops = ".")"); },
      "flops");
  task(
      "formula_beyond_double",
      [](const std::string& t) { return edit(t, kFlops, R"(flops = "1e999 * M")"); }, "flops");
  task(
      "formula_huge_number",
      [](const std::string& t) {
        return edit(t, kFlops, "flops = \"" + repeat("9", 5000) + " * M\"");
      },
      "flops");
  task(
      "formula_long_chain",
      [](const std::string& t) {
        return edit(t, kFlops, "flops = \"M" + repeat(" + M", 200000) + "\"");
      },
      "flops");
}

// Hostile TE specs, shapes and schedules.
void spec_and_schedule_cases(Cases& c) {
  auto task = [&](auto&&... a) { c.task(std::forward<decltype(a)>(a)...); };
  auto schedule = [&](auto&&... a) { c.schedule(std::forward<decltype(a)>(a)...); };
  // --- the TE spec ------------------------------------------------------------------------------
  task(
      "te_nested_parens",
      [](const std::string& t) {
        return edit(
            t, kSpec,
            "y[m] = sum(k: " + repeat("(", 100000) + "A[m, k]" + repeat(")", 100000) + " * x[k])");
      },
      "spec");
  task(
      "te_many_statements",
      [](const std::string& t) {
        std::string s;
        for (int i = 0; i < 20000; ++i) s += "t" + std::to_string(i) + "[m] = A[m, 0]\n";
        return edit(t, kSpec, s + kSpec);
      },
      "statements");
  task(
      "te_many_reduction_variables",
      [](const std::string& t) {
        std::string vars;
        for (int i = 0; i < 100000; ++i) vars += "r" + std::to_string(i) + ", ";
        return edit(t, kSpec, "y[m] = sum(" + vars + "k: A[m, k] * x[k])");
      },
      "spec");
  task(
      "te_huge_identifier",
      [](const std::string& t) {
        return edit(t, kSpec, "y[m] = sum(k: A[m, k] * " + repeat("x", 200000) + "[k])");
      },
      "spec");
  // --- shapes: sizes checked before anything is allocated --------------------------------------
  task(
      "shape_elements_overflow_size_t",
      [](const std::string& t) {
        return edit(t, kBench, "bench = { M = 4294967296, K = 4294967296 }");
      },
      "overflows");
  task(
      "shape_one_tebibyte",
      [](const std::string& t) { return edit(t, kBench, "bench = { M = 262144, K = 1048576 }"); },
      "memory");
  task(
      "shape_many_test_shapes",
      [](const std::string& t) {
        std::string shapes = "tests = [ ";
        for (int i = 0; i < 5000; ++i) shapes += "{ M = 1, K = " + std::to_string(i + 1) + " }, ";
        return edit(t, "tests = [ { M = 1, K = 1 },", shapes);
      },
      "test shapes");
  // --- schedules (kforge lower on the fixture) -------------------------------------------------
  schedule(
      "schedule_chained_splits",
      [] {
        std::string s = "split m 2 m1 m0\n";
        for (int i = 1; i < 2000; ++i)
          s += "split m" + std::to_string(i) + "0 2 m" + std::to_string(i + 1) + "1 m" +
               std::to_string(i + 1) + "0\n";
        return s;
      },
      "schedule");
  schedule(
      "schedule_huge_word", [] { return "split " + repeat("m", 1 << 20) + " 4 a b\n"; },
      "schedule");
  schedule(
      "schedule_many_steps", [] { return repeat("unroll k\n", 200000); }, "schedule");
  schedule(
      "schedule_invalid_utf8",
      [] { return std::string("split m\xff\xfe\x00 4 a b\n\x1b]0;owned\x07\n", 28); }, "schedule");
}

std::vector<Case> cases() {
  Cases c;
  task_file_cases(c);
  spec_and_schedule_cases(c);
  return c.out;
}

INSTANTIATE_TEST_SUITE_P(Class6, UntrustedText, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace kf
