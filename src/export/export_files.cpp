#include "export/export_files.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>

#include "support/json_text.h"

namespace kf {
namespace {

bool is_bf16(const ExportParam& p) {
  return p.type.find("kf::bf16") != std::string::npos;
}

// The parameter's type as the header spells it: C linkage names bf16 `kforge_bf16`, a type C
// can declare too.
std::string header_type(const ExportPlan& plan, const ExportParam& p) {
  if (!plan.c_linkage || !is_bf16(p)) return p.type;
  std::string t = p.type;
  t.replace(t.find("kf::bf16"), 8, "kforge_bf16");
  return t;
}

std::string declaration(const ExportPlan& plan) {
  std::vector<std::string> params;
  for (const ExportParam& p : plan.params) params.push_back(header_type(plan, p) + " " + p.name);
  return fmt::format("void {}({})", plan.function, fmt::join(params, ", "));
}

std::string comment_block(const std::vector<std::string>& lines, std::string_view lead) {
  std::string out;
  for (const std::string& l : lines) {
    const std::string line = comment_line(l);
    out += line.empty() ? std::string(lead) + "\n" : fmt::format("{} {}\n", lead, line);
  }
  return out;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string qualified(const ExportPlan& plan) {
  return plan.c_linkage ? plan.function : plan.ns + "::" + plan.function;
}

// How the kernel uses threads, in words, for the header and the README.
std::string threads_note(const ExportPlan& plan) {
  if (plan.use.openmp_calls)
    return "Threads: OpenMP, required (the kernel calls the OpenMP runtime); it runs on "
           "OMP_NUM_THREADS threads.";
  if (plan.use.openmp_pragmas)
    return fmt::format(
        "Threads: OpenMP parallel loops, on OMP_NUM_THREADS threads; built without OpenMP "
        "(-D{}_OPENMP=OFF) they run serially.",
        upper(plan.function));
  if (plan.use.threads) return "Threads: the kernel starts its own (std::thread or pthreads).";
  return "Threads: none; the kernel runs on the calling thread.";
}

std::string header_text(const ExportPlan& plan) {
  std::vector<std::string> about = {
      fmt::format("{}.h: a kernel exported by kforge (`kforge export`).", plan.function)};
  about.insert(about.end(), plan.provenance.begin(), plan.provenance.end());
  about.emplace_back("");
  about.push_back(fmt::format("{}(...):", qualified(plan)));
  for (const std::string& s : plan.signature) about.push_back("  " + s);
  about.push_back(threads_note(plan));
  std::string h = comment_block(about, "//") + "#pragma once\n\n";
  const bool bf16 = std::any_of(plan.params.begin(), plan.params.end(), is_bf16);
  if (!plan.c_linkage) {
    h += "#include <cstdint>\n";
    if (bf16) h += "#include <kforge/kernel.h>\n";
    return h + fmt::format("\nnamespace {} {{\n\n{};\n\n}}  // namespace {}\n", plan.ns,
                           declaration(plan), plan.ns);
  }
  h += "#ifdef __cplusplus\n#include <cstdint>\n";
  if (bf16) h += "#include <kforge/kernel.h>\ntypedef kf::bf16 kforge_bf16;\n";
  h += "extern \"C\" {\n#else\n#include <stdint.h>\n";
  if (bf16)
    h += "#ifndef KFORGE_BF16_DEFINED\n#define KFORGE_BF16_DEFINED\n"
         "typedef struct kforge_bf16 {\n  uint16_t bits;\n} kforge_bf16;  // kf::bf16's layout\n"
         "#endif\n";
  h += "#endif\n\n" + declaration(plan) + ";\n\n#ifdef __cplusplus\n}  // extern \"C\"\n#endif\n";
  return h;
}

std::string source_text(const ExportPlan& plan) {
  const std::string impl = impl_namespace(plan);
  std::vector<std::string> about = {
      fmt::format("{}.cpp: a kernel exported by kforge (`kforge export`).", plan.function)};
  about.insert(about.end(), plan.provenance.begin(), plan.provenance.end());
  about.emplace_back("");
  about.push_back(fmt::format(
      "The kernel's code follows unchanged inside namespace {} (its helpers stay internal to "
      "this file); {} at the end calls it.",
      impl, qualified(plan)));
  std::string s = comment_block(about, "//");
  s += fmt::format("#include \"{}.h\"\n\n", plan.function);
  const std::string open = fmt::format("namespace {} {{\nnamespace {{\n", impl);
  const std::string close = fmt::format("}}  // namespace\n}}  // namespace {}\n", impl);
  s += wrap_source(plan.source, {.open = open, .close = close});

  std::vector<std::string> types, names;
  for (const ExportParam& p : plan.params) {
    types.push_back(header_type(plan, p));
    names.push_back(p.name);
  }
  const std::string body = fmt::format(
      "{} {{\n"
      "  // The kernel at the task's exact parameter types, as kforge's judge called it.\n"
      "  void (*const kforge_kernel_)({}) = &{}::{};\n"
      "  kforge_kernel_({});\n"
      "}}\n",
      declaration(plan), fmt::join(types, ", "), impl, plan.function, fmt::join(names, ", "));
  if (plan.c_linkage) return s + "\nextern \"C\" " + body;
  return s + fmt::format("\nnamespace {} {{\n\n{}\n}}  // namespace {}\n", plan.ns, body, plan.ns);
}

std::string cmake_parallel(const ExportPlan& plan, const std::string& var) {
  const std::string& fn = plan.function;
  std::string c;
  if (plan.use.openmp_calls) {
    c += fmt::format(
        "\n# The kernel calls the OpenMP runtime: OpenMP is required. Threads: OMP_NUM_THREADS.\n"
        "find_package(OpenMP REQUIRED COMPONENTS CXX)\n"
        "target_link_libraries({} PRIVATE OpenMP::OpenMP_CXX)\n",
        fn);
  } else if (plan.use.openmp_pragmas) {
    c += fmt::format(
        "\n# The kernel's parallel loops are OpenMP pragmas: with OpenMP they run on\n"
        "# OMP_NUM_THREADS threads, without it serially (same results).\n"
        "option({0}_OPENMP \"Build {1} with OpenMP\" ON)\n"
        "if({0}_OPENMP)\n"
        "  find_package(OpenMP REQUIRED COMPONENTS CXX)\n"
        "  target_link_libraries({1} PRIVATE OpenMP::OpenMP_CXX)\n"
        "endif()\n",
        var, fn);
  }
  if (plan.use.threads)
    c += fmt::format(
        "\n# The kernel starts threads of its own.\nfind_package(Threads REQUIRED)\n"
        "target_link_libraries({} PRIVATE Threads::Threads)\n",
        fn);
  return c;
}

std::string cmake_text(const ExportPlan& plan) {
  const std::string& fn = plan.function;
  const std::string var = upper(fn);
  std::vector<std::string> about = {
      fmt::format("{}: a kernel exported by kforge (`kforge export`). In your project:", fn),
      fmt::format("  add_subdirectory(path/to/this/folder {}) and", fn),
      fmt::format("  target_link_libraries(your_target PRIVATE {}), then #include \"{}.h\".", fn,
                  fn)};
  about.insert(about.end(), plan.provenance.begin(), plan.provenance.end());
  std::string c = comment_block(about, "#");
  c += fmt::format(
      "cmake_minimum_required(VERSION 3.16)\n"
      "project(kforge_{0} LANGUAGES CXX)\n\n"
      "# The instruction set: {2}. Any GCC or Clang flags for another machine may replace them.\n"
      "set({1}_ARCH_FLAGS \"{3}\" CACHE STRING \"Instruction-set flags for the {0} kernel\")\n"
      "separate_arguments(_{0}_arch UNIX_COMMAND \"${{{1}_ARCH_FLAGS}}\")\n\n"
      "add_library({0} {0}.cpp)\n"
      "add_library(kforge::{0} ALIAS {0})\n"
      "target_include_directories({0} PUBLIC ${{CMAKE_CURRENT_SOURCE_DIR}})\n",
      fn, var, comment_line(plan.target), fmt::join(plan.arch_flags, " "));
  if (needs_kernel_header(plan)) {
    const bool bf16 = std::any_of(plan.params.begin(), plan.params.end(), is_bf16);
    c += fmt::format("target_include_directories({} {} ${{CMAKE_CURRENT_SOURCE_DIR}}/include)\n",
                     fn, bf16 && !plan.c_linkage ? "PUBLIC" : "PRIVATE");
  }
  std::vector<std::string> flags = {"-O3"};
  flags.insert(flags.end(), plan.source_flags.begin(), plan.source_flags.end());
  c += fmt::format(
      "target_compile_features({0} PRIVATE cxx_std_20)\n"
      "set_target_properties({0} PROPERTIES POSITION_INDEPENDENT_CODE ON)\n"
      "# -O3 as kforge's judge compiled it{1}.\n"
      "target_compile_options({0} PRIVATE {2} ${{_{0}_arch}})\n",
      fn, plan.source_flags.empty() ? "" : ", and the flags the kernel's source asks for",
      fmt::join(flags, " "));
  return c + cmake_parallel(plan, var);
}

std::string readme_text(const ExportPlan& plan) {
  const std::string& fn = plan.function;
  std::string r = fmt::format("# {}: a kernel exported by kforge\n\n", fn);
  for (const std::string& l : plan.provenance) r += "- " + comment_line(l) + "\n";
  r += fmt::format(
      "\n## Use it from CMake\n\n```cmake\nadd_subdirectory(path/to/{0} {0})\n"
      "target_link_libraries(your_target PRIVATE {0})  # or kforge::{0}\n```\n\n"
      "```{1}\n#include \"{0}.h\"\n\n{2}(...);  // {3}\n```\n\n",
      fn, plan.c_linkage ? "c" : "cpp", qualified(plan), plan.c_linkage ? "C linkage" : "C++");
  r += "## The function\n\n```\n" + declaration(plan) + "\n```\n\n";
  for (const std::string& s : plan.signature) r += "- " + comment_line(s) + "\n";
  r += fmt::format("\n{}\n\n", threads_note(plan));
  r += fmt::format(
      "## Build\n\n`{0}.cpp` is built for {1}: `{2}` (set `{3}_ARCH_FLAGS` for another machine; "
      "`kforge export --target` regenerates a generated kernel for another instruction set).\n",
      fn, comment_line(plan.target), fmt::join(plan.arch_flags, " "), upper(fn));
  if (!plan.schedule.empty())
    r += fmt::format(
        "\n`{0}.sched` is the schedule the kernel was generated from: `kforge lower TASK -s "
        "{0}.sched --target T` prints it again.\n",
        fn);
  return r;
}

}  // namespace

bool needs_kernel_header(const ExportPlan& plan) {
  return plan.use.kernel_header || std::any_of(plan.params.begin(), plan.params.end(), is_bf16);
}

std::string impl_namespace(const ExportPlan& plan) {
  return plan.c_linkage ? "kforge_impl_" + plan.function : plan.ns + "::kforge_impl";
}

std::string comment_line(std::string_view text) {
  std::string s = sanitize_utf8(text);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  while (!s.empty() && (s.back() == ' ' || s.back() == '\\')) s.pop_back();
  return s;
}

std::vector<ExportFile> export_files(const ExportPlan& plan) {
  std::vector<ExportFile> files = {{plan.function + ".h", header_text(plan)},
                                   {plan.function + ".cpp", source_text(plan)},
                                   {"CMakeLists.txt", cmake_text(plan)},
                                   {"README.md", readme_text(plan)}};
  if (!plan.schedule.empty()) files.push_back({plan.function + ".sched", plan.schedule});
  return files;
}

}  // namespace kf
