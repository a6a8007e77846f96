// `kforge new` and `kforge check` through the real binary, as a new user meets them: a plain C++
// function that is not in the suite becomes a task skeleton; `check` lists exactly the fields
// still to fill in (exit 1, no judge run); the test fills them in by editing the text, and `check`
// then judges the converted reference at f32 against its own f64 instantiation and passes.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::run_kforge;

// Out of the kernel ABI's order, an int size, float literals and a C float function: each needs
// one of kforge new's rewrites before the reference compiles at double.
const char* kKernel = R"(#include <cmath>

// z = a * x + y, softly clipped into (-8, 8)
void scale_add(int n, float a, const float* x, const float* y, float* z) {
  for (int i = 0; i < n; ++i) {
    const float v = a * x[i] + y[i];
    z[i] = v / (1.0f + fabsf(v) * 0.125f);
  }
}
)";

std::string text_of(const fs::path& p) {
  auto t = read_file(p);
  return t ? *t : std::string();
}

void replace_first(std::string& s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from << "\nin:\n" << s;
  s.replace(at, from.size(), to);
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(NewTaskCli, SkeletonFromAPlainFunctionThenCheckThenFilled) {
  const fs::path root = testing::process_temp_dir("kf_new_task");
  const fs::path source = root / "scale_add.cpp";
  ASSERT_TRUE(write_file_atomic(source, kKernel).ok());
  const fs::path dir = root / "scale_add_task";

  ProcessResult made = run_kforge({"new", dir.string(), "--from", source.string()});
  ASSERT_EQ(made.exit_code, 0) << describe(made);
  EXPECT_TRUE(has(made.out, "function scale_add (f32): inputs x, y; outputs z; dims n; scalars a"))
      << made.out;
  const std::string reference = text_of(dir / "reference.cpp");
  EXPECT_TRUE(has(reference,
                  "void scale_add(const T* x, const T* y, T* z, int64_t n_arg, "
                  "kf::acc_t<T> a) {"))
      << reference;

  // The skeleton: one line per field left, naming it; nothing is judged.
  ProcessResult todo = run_kforge({"check", dir.string()});
  EXPECT_EQ(todo.exit_code, 1) << describe(todo);
  for (const char* field :
       {"task.toml:20: [signature] input 'x': no shape yet",
        "task.toml:21: [signature] input 'y': no shape yet",
        "task.toml:24: [signature] output 'z': no shape yet", "[shapes] bench: no value yet for n",
        "[shapes] tests: no value yet for n in 3 test shapes", "[cost] flops: no formula yet",
        "[cost] bytes: no formula yet", "7 to fill in"})
    EXPECT_TRUE(has(todo.out, field)) << field << "\n" << describe(todo);
  EXPECT_FALSE(has(todo.out, " load ")) << "a skeleton is not loaded: " << todo.out;

  ProcessResult json = run_kforge({"check", dir.string(), "--json"});
  EXPECT_EQ(json.exit_code, 1);
  const auto doc = nlohmann::json::parse(json.out);
  const auto& checks = doc["tasks"][0]["checks"];
  ASSERT_EQ(checks.size(), 7u) << json.out;
  for (const auto& c : checks) {
    EXPECT_EQ(c["scope"], "todo");
    EXPECT_EQ(c["verdict"], "incomplete");
    EXPECT_EQ(c["status"], "fail");
  }

  // A folder that is not empty is not overwritten without --force.
  ProcessResult again = run_kforge({"new", dir.string(), "--from", source.string()});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_TRUE(has(again.err, "is not empty")) << describe(again);

  // Fill the placeholders the way a user would, in the text.
  std::string toml = text_of(dir / "task.toml");
  for (int i = 0; i < 3; ++i) replace_first(toml, "shape = \"TODO\"", "shape = [\"n\"]");
  replace_first(toml, "bench = { n = \"TODO\" }", "bench = { n = 20000 }");
  replace_first(toml, "{ n = \"TODO\" }", "{ n = 1 }");
  replace_first(toml, "{ n = \"TODO\" }", "{ n = 17 }");
  replace_first(toml, "{ n = \"TODO\" }", "{ n = 300, a = -0.5 }");
  replace_first(toml, "flops = \"TODO\"", "flops = \"6 * n\"");
  replace_first(toml, "bytes = \"TODO\"", "bytes = \"12 * n\"");
  ASSERT_TRUE(write_file_atomic(dir / "task.toml", toml).ok());

  ProcessResult passed = run_kforge({"check", dir.string()}, 300);
  EXPECT_EQ(passed.exit_code, 0) << describe(passed);
  EXPECT_TRUE(has(passed.out, "pass    task      load")) << passed.out;
  EXPECT_TRUE(has(passed.out, "pass    reference tests")) << passed.out;
  EXPECT_TRUE(has(passed.out, "pass    reference bench")) << passed.out;

  // --force writes the skeleton again over the filled task.
  ProcessResult forced = run_kforge({"new", dir.string(), "--from", source.string(), "--force"});
  EXPECT_EQ(forced.exit_code, 0) << describe(forced);
  EXPECT_TRUE(has(text_of(dir / "task.toml"), "shape = \"TODO\""));
}

TEST(NewTaskCli, FromASignatureTheReferenceIsATodoToo) {
  const fs::path dir = testing::process_temp_dir("kf_new_task") / "row_sum";
  ProcessResult made =
      run_kforge({"new", dir.string(), "--signature",
                  "void row_sum(const float* x, float* y, int64_t rows, int64_t cols)", "--json"});
  ASSERT_EQ(made.exit_code, 0) << describe(made);
  const auto doc = nlohmann::json::parse(made.out);
  EXPECT_EQ(doc["schema"], "kforge-new/1");
  EXPECT_EQ(doc["dims"], nlohmann::json({"rows", "cols"}));
  EXPECT_EQ(doc["missing"].size(), 7u) << made.out;

  ProcessResult todo = run_kforge({"check", dir.string()});
  EXPECT_EQ(todo.exit_code, 1);
  EXPECT_TRUE(has(todo.out, "/reference.cpp:")) << describe(todo);
  EXPECT_TRUE(has(todo.out, ": write the reference: every element of y")) << describe(todo);
}

TEST(NewTaskCli, InputThatIsNoKernelIsRefusedWithItsReason) {
  const fs::path root = testing::process_temp_dir("kf_new_task");
  const fs::path junk = root / "junk.cpp";
  ASSERT_TRUE(write_file_atomic(junk, "float sq(float v) { return v * v; }\n").ok());
  ProcessResult r = run_kforge({"new", (root / "junk_task").string(), "--from", junk.string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(has(r.err, "no kernel found")) << describe(r);
  EXPECT_TRUE(has(r.err, "'sq' returns float")) << describe(r);
  EXPECT_FALSE(fs::exists(root / "junk_task")) << "nothing is written for input that fails";

  ProcessResult sig = run_kforge(
      {"new", (root / "sig_task").string(), "--signature", "void f(const float& x, float* y)"});
  EXPECT_EQ(sig.exit_code, 1);
  EXPECT_TRUE(has(sig.err, "--signature: column 19: 'x' is a reference")) << describe(sig);

  ProcessResult both = run_kforge({"new", (root / "t").string()});
  EXPECT_EQ(both.exit_code, 2) << describe(both);
}

}  // namespace
}  // namespace kf
