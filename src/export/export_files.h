// The files `kforge export` writes for one kernel: a header that declares the task's function
// (in a namespace, or with C linkage), the kernel's source wrapped so its helpers stay inside
// the file, a CMake library target with the flags of the chosen target, and a README.
//
//   ExportPlan plan{.function = "rmsnorm", .params = {{"const float*", "x"}, ...},
//                   .ns = "kforge_rmsnorm", .source = best.source, .arch_flags = {...}};
//   for (const ExportFile& f : export_files(plan)) write_file_atomic(dir / f.name, f.text);
//
// The exported function is a small wrapper with the task's signature that calls the kernel
// through a function pointer of the exact parameter types, as kforge's judge calls it
// (harness/shim.h): a kernel written as a template over its element type is instantiated at
// those types, and the kernel's own definitions (in `impl_namespace(plan)`, an unnamed namespace
// inside it) never become symbols of the library. Every text here is built from the plan alone;
// the plan's provenance lines may come from the store (untrusted text), so each is put on one
// line before it goes into a comment.
#pragma once

#include <string>
#include <vector>

#include "export/export_source.h"

namespace kf {

struct ExportParam {
  std::string type;  // as the judge passes it: "const float*", "int64_t", "float", "kf::bf16*"
  std::string name;
};

struct ExportPlan {
  std::string function;  // the task's function: the file names, the library target, the symbol
  std::vector<ExportParam> params;
  bool c_linkage = false;
  std::string ns;      // the function's namespace (C++ linkage); "a::b" nests
  std::string source;  // the kernel's translation unit, as judged or regenerated
  std::string target;  // what it is built for, in words: "avx2 (-march=x86-64-v3: ...)"
  std::vector<std::string> arch_flags;    // instruction-set flags: {"-march=x86-64-v3"}
  std::vector<std::string> source_flags;  // what the source asks for: `// kforge: flags ...`
  std::vector<std::string> provenance;    // lines for the header's and the source's comment
  std::vector<std::string> signature;     // one line per parameter: dtype, shape, role
  std::string schedule;                   // a generated kernel's schedule ("" if written)
  SourceUse use;                          // scan_source_use(source)
};

struct ExportFile {
  std::string name;  // relative to the export directory
  std::string text;
};

// FUNCTION.h, FUNCTION.cpp, CMakeLists.txt, README.md, and FUNCTION.sched for a generated
// kernel. kforge/kernel.h, when needs_kernel_header(plan), is the caller's to copy into include/.
std::vector<ExportFile> export_files(const ExportPlan& plan);

// Whether the export needs kforge/kernel.h: the source includes it or a parameter is bf16.
bool needs_kernel_header(const ExportPlan& plan);

// The namespace that holds the kernel's own code: NS::kforge_impl, or kforge_impl_FUNCTION for
// C linkage.
std::string impl_namespace(const ExportPlan& plan);

// `text` as one line of a comment: valid UTF-8, control characters as spaces, no trailing
// backslash (which would continue a // comment onto the next line).
std::string comment_line(std::string_view text);

}  // namespace kf
