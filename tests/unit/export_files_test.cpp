// export/export_files.h: the header, source, CMake and README texts of an exported kernel.
// (tests/integration/export_cli_test.cpp builds real exports in a fresh CMake project.)
#include "export/export_files.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace kf {
namespace {

ExportPlan plan_of(const std::string& source) {
  return {.function = "scale",
          .params = {{"const float*", "x"}, {"float*", "y"}, {"int64_t", "N"}, {"float", "a"}},
          .ns = "acme::k",
          .source = source,
          .target = "avx2 (x86-64-v3)",
          .arch_flags = {"-march=x86-64-v3"},
          .provenance = {"run r1", "recipe with\nnewline\\"},
          .signature = {"x: f32[N], input"},
          .use = scan_source_use(source)};
}

std::map<std::string, std::string> files_of(const ExportPlan& plan) {
  std::map<std::string, std::string> m;
  for (const ExportFile& f : export_files(plan)) m[f.name] = f.text;
  return m;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* kSource =
    "#include <cstdint>\nstatic float twice(float v) { return 2 * v; }\n"
    "void scale(const float* x, float* y, int64_t N, float a) {}\n";

TEST(ExportFiles, ANamespaceExportDeclaresAndForwardsInTheNamespace) {
  auto f = files_of(plan_of(kSource));
  ASSERT_EQ(f.size(), 4u) << "no schedule, no .sched";
  const std::string& h = f["scale.h"];
  EXPECT_TRUE(has(h,
                  "namespace acme::k {\n\nvoid scale(const float* x, float* y, int64_t N, "
                  "float a);\n\n}  // namespace acme::k\n"))
      << h;
  EXPECT_TRUE(has(h, "// recipe with newline\n")) << "one comment line, no continuation: " << h;
  const std::string& cpp = f["scale.cpp"];
  EXPECT_TRUE(has(cpp, "#include \"scale.h\"\n")) << cpp;
  EXPECT_TRUE(has(cpp,
                  "#include <cstdint>\nnamespace acme::k::kforge_impl {\nnamespace {\n"
                  "static float twice"))
      << cpp;
  EXPECT_TRUE(has(cpp,
                  "void (*const kforge_kernel_)(const float*, float*, int64_t, float) = "
                  "&acme::k::kforge_impl::scale;\n  kforge_kernel_(x, y, N, a);"))
      << cpp;
  const std::string& cmake = f["CMakeLists.txt"];
  EXPECT_TRUE(has(cmake, "add_library(scale scale.cpp)")) << cmake;
  EXPECT_TRUE(has(cmake, "set(SCALE_ARCH_FLAGS \"-march=x86-64-v3\" CACHE STRING")) << cmake;
  EXPECT_FALSE(has(cmake, "OpenMP")) << cmake;
  EXPECT_FALSE(has(cmake, "/include)")) << "no kforge/kernel.h to find";
}

TEST(ExportFiles, CLinkageGivesAHeaderCCanInclude) {
  ExportPlan p = plan_of(kSource);
  p.c_linkage = true;
  p.params[0].type = "const kf::bf16*";
  auto f = files_of(p);
  const std::string& h = f["scale.h"];
  EXPECT_TRUE(has(h, "extern \"C\" {\n#else\n#include <stdint.h>\n")) << h;
  EXPECT_TRUE(has(h, "typedef struct kforge_bf16 {\n  uint16_t bits;\n} kforge_bf16;")) << h;
  EXPECT_TRUE(has(h, "void scale(const kforge_bf16* x, float* y, int64_t N, float a);")) << h;
  EXPECT_TRUE(has(f["scale.cpp"], "extern \"C\" void scale(const kforge_bf16* x,")) << "bf16";
  EXPECT_TRUE(has(f["scale.cpp"], "&kforge_impl_scale::scale;"));
  EXPECT_TRUE(needs_kernel_header(p)) << "a bf16 parameter";
  EXPECT_TRUE(has(f["CMakeLists.txt"],
                  "target_include_directories(scale PRIVATE "
                  "${CMAKE_CURRENT_SOURCE_DIR}/include)"));
}

TEST(ExportFiles, OpenMpIsAnOptionForPragmasAndRequiredForCalls) {
  auto pragmas = files_of(plan_of(std::string(kSource) + "#pragma omp parallel for\n"));
  EXPECT_TRUE(
      has(pragmas["CMakeLists.txt"], "option(SCALE_OPENMP \"Build scale with OpenMP\" ON)"));
  EXPECT_TRUE(has(pragmas["scale.h"], "-DSCALE_OPENMP=OFF"));
  auto calls =
      files_of(plan_of(std::string(kSource) + "int n() { return omp_get_max_threads(); }"));
  EXPECT_FALSE(has(calls["CMakeLists.txt"], "option(")) << calls["CMakeLists.txt"];
  EXPECT_TRUE(has(calls["CMakeLists.txt"],
                  "find_package(OpenMP REQUIRED COMPONENTS CXX)\n"
                  "target_link_libraries(scale PRIVATE OpenMP::OpenMP_CXX)"));
  auto threads = files_of(plan_of(std::string(kSource) + "void g() { std::thread t; }"));
  EXPECT_TRUE(has(threads["CMakeLists.txt"], "Threads::Threads"));
}

TEST(ExportFiles, TheSourcesOwnFlagsAndScheduleComeAlong) {
  ExportPlan p = plan_of(kSource);
  p.source_flags = {"-ffast-math"};
  p.schedule = "# t: vectorize\nvectorize y.i 16\n";
  auto f = files_of(p);
  EXPECT_TRUE(has(f["CMakeLists.txt"], "PRIVATE -O3 -ffast-math ${_scale_arch}"));
  EXPECT_EQ(f["scale.sched"], p.schedule);
  EXPECT_TRUE(has(f["README.md"], "kforge lower TASK -s scale.sched"));
}

TEST(ExportFiles, ACommentLineIsOneLineWithoutAContinuation) {
  EXPECT_EQ(comment_line("a\nb\\\\ "), "a b");
  EXPECT_EQ(comment_line("\x1b[31mred\xff"), " [31mred\xEF\xBF\xBD");
}

}  // namespace
}  // namespace kf
