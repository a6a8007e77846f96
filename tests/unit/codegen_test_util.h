// Helpers for the codegen tests (not a test target): compile generated C++ with warnings as
// errors, load it in-process and call it through a generic entry point.
//
//   LoadedKernel k = compile_and_load(f, codegen_cpp(f, CodegenTarget::avx512));
//   ASSERT_TRUE(k.ok()) << k.log;
//   k.call({x.data(), y.data()}, {n}, {});     // buffers, dims, scalars in ABI order
//
// The entry point `kf_test_entry(void* const* buffers, const int64_t* dims,
// const double* scalars)` is appended to the source, like the harness's shim. The test process
// trusts this code (it is kforge's own output on test IR), unlike candidates in the judge.
#pragma once

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "codegen/codegen_cpp.h"
#include "codegen/cpp_prelude.h"
#include "support/fs.h"
#include "support/subprocess.h"

namespace kf::testing_ir {

// The shim that maps (buffers, dims, scalars) onto f's parameters.
inline std::string test_entry_shim(const ir::LoweredFunc& f) {
  std::string args;
  int b = 0, d = 0, s = 0;
  for (const ir::Param& p : f.params) {
    if (!args.empty()) args += ", ";
    std::string st = CppPrelude::storage_type(p.type.kind());
    switch (p.kind) {
      case ir::ParamKind::input:
        args += "static_cast<const " + st + "*>(b[" + std::to_string(b++) + "])";
        break;
      case ir::ParamKind::output:
        args += "static_cast<" + st + "*>(b[" + std::to_string(b++) + "])";
        break;
      case ir::ParamKind::dim:
        args += "d[" + std::to_string(d++) + "]";
        break;
      case ir::ParamKind::scalar:
        args += (p.type.kind() == ir::ScalarKind::f64 ? "s[" : "static_cast<float>(s[") +
                std::to_string(s++) + (p.type.kind() == ir::ScalarKind::f64 ? "]" : "])");
        break;
    }
  }
  return "\nextern \"C\" void kf_test_entry(void* const* b, const int64_t* d, const double* s) {\n"
         "  (void)b; (void)d; (void)s;\n  " +
         cpp_name(f.name) + "(" + args + ");\n}\n";
}

struct LoadedKernel {
  void* handle = nullptr;
  void (*entry)(void* const*, const int64_t*, const double*) = nullptr;
  std::string log;
  double compile_seconds = 0;
  bool ok() const { return entry != nullptr; }
  void call(std::vector<void*> buffers, std::vector<int64_t> dims,
            std::vector<double> scalars) const {
    dims.push_back(0);
    scalars.push_back(0);
    entry(buffers.data(), dims.data(), scalars.data());
  }
};

// Compiles with the judge's base flags plus -Wall -Wextra -Werror, then dlopens the result.
inline LoadedKernel compile_and_load(const ir::LoweredFunc& f, const std::string& source) {
  LoadedKernel k;
  static int counter = 0;
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("kf_codegen_test_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string stem = (dir / ("k" + std::to_string(counter++))).string();
  Status w = write_file_atomic(stem + ".cpp", source + test_entry_shim(f));
  if (!w.ok()) {
    k.log = w.message();
    return k;
  }
  ProcessOptions o;
  o.argv = {"g++",
            "-std=c++20",
            "-O3",
            "-march=native",
            "-fopenmp",
            "-fPIC",
            "-shared",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-I" KFORGE_TEST_SOURCE_DIR "/runtime",
            stem + ".cpp",
            "-o",
            stem + ".so"};
  o.timeout_s = 120;
  auto r = run_process(o);
  if (!r) {
    k.log = r.error().message();
    return k;
  }
  k.compile_seconds = r->seconds;
  k.log = r->err + r->out;
  if (!r->ok()) return k;
  k.handle = dlopen((stem + ".so").c_str(), RTLD_NOW | RTLD_LOCAL);
  std::error_code ec;  // a loaded object stays mapped after its file is removed
  std::filesystem::remove(stem + ".cpp", ec);
  std::filesystem::remove(stem + ".so", ec);
  std::filesystem::remove(dir, ec);  // only when empty
  if (!k.handle) {
    k.log += dlerror();
    return k;
  }
  k.entry = reinterpret_cast<decltype(k.entry)>(dlsym(k.handle, "kf_test_entry"));
  if (!k.entry) k.log += "kf_test_entry not found";
  return k;
}

}  // namespace kf::testing_ir
