// task/task_skeleton.h: the task.toml `kforge new` writes holds the signature it was given and a
// "TODO" for every field only the user knows; missing_fields names each of them, one line per
// field; once they are filled in the file loads as a task with exactly that signature.
#include "task/task_skeleton.h"

#include <gtest/gtest.h>

#include <string>

#include "task/task.h"
#include "task/toml_text.h"

namespace kf {
namespace {

ParsedSignature sig_of(const std::string& text) {
  auto s = parse_signature(text);
  KF_CHECK(s.has_value()) << s.error().message();
  return *s;
}

void replace_first(std::string& s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  ASSERT_NE(at, std::string::npos) << from;
  s.replace(at, from.size(), to);
}

TEST(TaskSkeleton, ListsEachFieldToFillAndLoadsOnceFilled) {
  const ParsedSignature sig = sig_of(
      "void gemv(const float* A, const float* x, float* y, int64_t M, int64_t K, float "
      "alpha = 2.5f)");
  std::string toml = skeleton_toml(sig, {.name = "gemv", .dtype = DType::f32, .origin = "g.cpp"});
  ASSERT_TRUE(parse_toml_text(toml, "task.toml", 0).has_value());
  // As written, it does not load: a placeholder is not a shape, and the loader says what it is.
  auto unfilled = parse_task(toml, "task.toml");
  ASSERT_FALSE(unfilled.has_value());
  EXPECT_NE(unfilled.error().message().find("'shape' must be an array (\"TODO\" is a placeholder "
                                            "from kforge new"),
            std::string::npos)
      << unfilled.error().message();

  const std::vector<MissingField> m = missing_fields(toml, "");
  std::vector<std::string> what;
  for (const MissingField& f : m) {
    EXPECT_EQ(f.file, "task.toml");
    EXPECT_GT(f.line, 0);
    what.push_back(f.what);
  }
  ASSERT_EQ(what.size(), 7u) << ::testing::PrintToString(what);
  EXPECT_NE(what[0].find("[signature] input 'A': no shape yet"), std::string::npos) << what[0];
  EXPECT_NE(what[1].find("[signature] input 'x': no shape yet"), std::string::npos) << what[1];
  EXPECT_NE(what[2].find("[signature] output 'y': no shape yet"), std::string::npos) << what[2];
  EXPECT_NE(what[2].find("e.g. [\"M\", \"K\"]"), std::string::npos) << what[2];
  EXPECT_NE(what[3].find("[shapes] bench: no value yet for M, K"), std::string::npos) << what[3];
  EXPECT_NE(what[4].find("[shapes] tests: no value yet for M, K in 3 test shapes"),
            std::string::npos)
      << what[4];
  EXPECT_NE(what[5].find("[cost] flops"), std::string::npos) << what[5];
  EXPECT_NE(what[6].find("[cost] bytes"), std::string::npos) << what[6];
  EXPECT_EQ(m[3].text().rfind("task.toml:", 0), 0u);

  replace_first(toml, "shape = \"TODO\"", "shape = [\"M\", \"K\"]");
  replace_first(toml, "shape = \"TODO\"", "shape = [\"K\"]");
  replace_first(toml, "shape = \"TODO\"", "shape = [\"M\"]");
  replace_first(toml, "bench = { M = \"TODO\", K = \"TODO\" }", "bench = { M = 64, K = 64 }");
  for (const char* shape : {"{ M = 1, K = 1 }", "{ M = 3, K = 17 }", "{ M = 40, K = 9 }"})
    replace_first(toml, "{ M = \"TODO\", K = \"TODO\" }", shape);
  // Only flops filled: bytes is still listed.
  replace_first(toml, "flops = \"TODO\"", "flops = \"2 * M * K\"");
  const std::vector<MissingField> left = missing_fields(toml, "");
  ASSERT_EQ(left.size(), 1u);
  EXPECT_NE(left[0].what.find("[cost] bytes"), std::string::npos);
  replace_first(toml, "bytes = \"TODO\"", "bytes = \"4 * (M * K + K + M)\"");
  EXPECT_TRUE(missing_fields(toml, "").empty());

  auto task = parse_task(toml, "task.toml");
  ASSERT_TRUE(task.has_value()) << task.error().message() << "\n" << toml;
  EXPECT_EQ(task->function, "gemv");
  EXPECT_EQ(task->dims, (std::vector<std::string>{"M", "K"}));
  ASSERT_EQ(task->inputs.size(), 2u);
  EXPECT_EQ(task->inputs[0].name, "A");
  EXPECT_EQ(task->outputs[0].name, "y");
  ASSERT_EQ(task->scalars.size(), 1u);
  EXPECT_EQ(task->scalars[0].default_value, 2.5);
  EXPECT_EQ(task->tolerance_for(DType::f32).rtol, 1e-4);
}

TEST(TaskSkeleton, IntegerInputsNeedTheirBound) {
  const ParsedSignature sig = sig_of(
      "void gather(const float* table, const int32_t* idx, float* out, int64_t V, int64_t "
      "D, int64_t B)");
  const std::string toml = skeleton_toml(sig, {.name = "g", .dtype = DType::f32});
  bool saw = false;
  for (const MissingField& f : missing_fields(toml, ""))
    saw |= f.what.find("input 'idx': dist.hi not given yet") != std::string::npos;
  EXPECT_TRUE(saw) << toml;
  EXPECT_NE(toml.find("{ name = \"idx\", dtype = \"i32\""), std::string::npos) << toml;
}

TEST(TaskSkeleton, DtypesGetTheirToleranceAndTemplatesTheTaskDtype) {
  const ParsedSignature sig = sig_of("template <typename T> void f(const T* x, T* y, int64_t n)");
  const std::string toml = skeleton_toml(sig, {.name = "f", .dtype = DType::bf16});
  EXPECT_NE(toml.find("dtype       = \"bf16\""), std::string::npos);
  EXPECT_NE(toml.find("{ name = \"x\", dtype = \"bf16\""), std::string::npos);
  EXPECT_NE(toml.find("bf16 = { rel_l2 = 1e-2, atol = 1e-3, rtol = 1e-2 }"), std::string::npos);
  EXPECT_NE(toml.find("#   void f(const kf::bf16* x, kf::bf16* y, int64_t n)"), std::string::npos)
      << toml;
}

TEST(TaskSkeleton, NamesFromTheCommandLineAreQuoted) {
  const ParsedSignature sig = sig_of("void f(const float* x, float* y, int64_t n)");
  const std::string odd = "a \"quoted\"\nname\\ \xff";
  const std::string toml = skeleton_toml(sig, {.name = odd, .origin = "x\ny.cpp"});
  auto root = parse_toml_text(toml, "task.toml", 0);
  ASSERT_TRUE(root.has_value()) << root.error().message() << "\n" << toml;
  EXPECT_EQ((*root)["name"].value_or(std::string()), "a \"quoted\"\nname\\ \xEF\xBF\xBD");
}

TEST(MissingFields, ReferenceTodosAndCaps) {
  const std::string ref = "a\n// TODO(kforge): write it\nb\n  // TODO(kforge)\n";
  const std::vector<MissingField> m = missing_fields("not = [toml", ref);
  ASSERT_EQ(m.size(), 2u) << "TOML that does not parse is left to the loader";
  EXPECT_EQ(m[0].text(), "reference.cpp:2: write it");
  EXPECT_EQ(m[1].line, 4);

  std::string many;
  for (int i = 0; i < 500; ++i) many += "// TODO(kforge): " + std::to_string(i) + "\n";
  const std::vector<MissingField> capped = missing_fields("", many);
  ASSERT_EQ(capped.size(), kMaxMissingFields);
  EXPECT_EQ(capped.back().what, "... and 437 more");

  EXPECT_TRUE(missing_fields("name = \"x\"\n[cost]\nflops = \"2 * n\"\n", "").empty());
  const std::vector<MissingField> other = missing_fields("category = \"TODO\"\n", "");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].text(), "task.toml:1: category is still \"TODO\": give it a value");
}

}  // namespace
}  // namespace kf
