// `kforge export` end to end: a real `kforge optimize` run on the RMSNorm fixture
// (tests/integration/written_source/task), its best kernel exported, and the export built in a
// fresh CMake project (add_subdirectory + target_link_libraries) whose program calls the
// exported function on small shapes and compares it with the task's reference.cpp, instantiated
// at double in the same program, within the task's f32 tolerance. The program must exit 0, and
// exit 1 when one output element is perturbed (so the comparison can fail).
//
//   generated best (built-in brain): in a namespace, as judged, called from C++; and with C
//     linkage regenerated for avx2, called from a C program
//   written best (files brain, export/sources/template_rmsnorm.cpp): a template that includes
//     kforge/kernel.h, built without kforge's include directory; its helpers are not symbols of
//     the library
//   refusals: unknown run, an ambiguous id prefix, a run without a best, an unknown target, a
//     bad namespace, an output directory that cannot be made, a missing store
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "store/sqlite_store.h"
#include "support/fs.h"
#include "support/kforge_process.h"
#include "support/process_temp_dir.h"
#include "support/subprocess.h"
#include "support/test_env.h"

namespace kf {
namespace {

namespace fs = std::filesystem;
using testing::describe;
using testing::run_kforge;

const fs::path kTask = testing::source_dir() / "tests/integration/written_source/task";
const fs::path kSources = testing::source_dir() / "tests/integration/export/sources";

const fs::path& temp_root() {
  return testing::process_temp_dir("kf_export");
}

std::string slurp(const fs::path& p) {
  auto t = read_file(p);
  return t ? *t : std::string();
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// An exported source without the lines that open and close the kernel's scope in namespace
// `ns` (export/export_files.h): what is left holds the kernel's source as it was.
std::string without_scope_lines(const std::string& text, const std::string& ns) {
  const std::vector<std::string> scope = {"namespace " + ns + "::kforge_impl {", "namespace {",
                                          "}  // namespace",
                                          "}  // namespace " + ns + "::kforge_impl"};
  std::string out, line;
  std::istringstream in(text);
  while (std::getline(in, line))
    if (std::find(scope.begin(), scope.end(), line) == scope.end()) out += line + "\n";
  return out;
}

// Runs `kforge optimize` on the fixture task into its own store; returns the run's id.
std::string optimize(const fs::path& db, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "optimize", kTask.string(), "--min-time", "0.05",
      "--store",  db.string(),    "--out",      (db.parent_path() / "out").string(),
      "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  ProcessResult r = run_kforge(args, 300);
  KF_CHECK(r.ok()) << describe(r);
  return testing::only_run_in(*testing::open_store_at(db));
}

ProcessResult run(std::vector<std::string> argv,
                  std::vector<std::pair<std::string, std::string>> env = {}) {
  auto r = run_process({.argv = std::move(argv), .env_set = std::move(env), .timeout_s = 300});
  KF_CHECK(r.has_value()) << r.error().message();
  return *r;
}

// The checking program: the exported kernel against reference<double> on four shapes (one not a
// multiple of 8, one with the task's non-default eps), fresh NaN outputs each time. Valid C and
// C++; `call` is how it names the exported function.
std::string check_program(const std::string& call) {
  return R"(#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "rmsnorm.h"

#ifdef __cplusplus
extern "C"
#endif
    void
    reference_rmsnorm_f64(const double* x, const double* w, double* y, int64_t N, int64_t D,
                          double eps);

static float x[8192], w[1024], y[8192];
static double xd[8192], wd[1024], yd[8192];
static uint32_t state = 12345u;

static float uniform(void) {  // in [-1, 1)
  state = state * 1664525u + 1013904223u;
  return (float)((state >> 8) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

// The task's f32 tolerance (task.toml): rel_l2 1e-5, atol 1e-6, rtol 1e-5.
static int check(int64_t N, int64_t D, float eps, int perturb) {
  for (int64_t i = 0; i < N * D; ++i) xd[i] = x[i] = uniform();
  for (int64_t d = 0; d < D; ++d) wd[d] = w[d] = 1.0f + 0.5f * uniform();
  for (int64_t i = 0; i < N * D; ++i) y[i] = NAN;
  )" + call +
         R"((x, w, y, N, D, eps);
  reference_rmsnorm_f64(xd, wd, yd, N, D, (double)eps);
  if (perturb) y[N * D / 2] += 1e-3f * (fabsf(y[N * D / 2]) + 1.0f);
  double num = 0, den = 0;
  int bad = 0;
  for (int64_t i = 0; i < N * D; ++i) {
    const double e = fabs((double)y[i] - yd[i]);
    if (!(e <= 1e-6 + 1e-5 * fabs(yd[i]))) ++bad;
    num += e * e;
    den += yd[i] * yd[i];
  }
  if (bad > 0 || !(sqrt(num) <= 1e-5 * sqrt(den))) {
    printf("N=%lld D=%lld: %d elements out of tolerance\n", (long long)N, (long long)D, bad);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const int perturb = argc > 1 && strcmp(argv[1], "--perturb") == 0;
  int failed = check(1, 1, 1e-6f, perturb);
  failed |= check(3, 17, 1e-6f, perturb);
  failed |= check(4, 64, 1e-6f, perturb);
  failed |= check(5, 1000, 0.5f, perturb);
  printf(failed ? "MISMATCH\n" : "OK\n");
  return failed;
}
)";
}

// The task's reference.cpp at double, with C linkage so a C program can call it.
constexpr const char* kReferenceUnit = R"(#include <cstdint>

#include "reference.cpp"

extern "C" void reference_rmsnorm_f64(const double* x, const double* w, double* y, int64_t N,
                                      int64_t D, double eps) {
  rmsnorm<double>(x, w, y, N, D, eps);
}
)";

struct Consumer {
  fs::path build;   // its build directory
  std::string log;  // configure and build output
  bool built = false;
};

// A fresh CMake project that add_subdirectory()s the export and links `library` into the
// checking program (main.c or main.cpp); configured with Ninja and built.
Consumer build_consumer(const std::string& name, const fs::path& export_dir,
                        const std::string& library, const std::string& call, bool c_main) {
  const fs::path src = temp_root() / name;
  fs::create_directories(src);
  const std::string main_file = c_main ? "main.c" : "main.cpp";
  std::ofstream(src / main_file) << check_program(call);
  std::ofstream(src / "reference_unit.cpp") << kReferenceUnit;
  std::ofstream(src / "CMakeLists.txt")
      << "cmake_minimum_required(VERSION 3.16)\n"
         "project(export_consumer LANGUAGES C CXX)\n"
         "add_subdirectory(${EXPORT_DIR} exported)\n"
         "add_executable(check "
      << main_file
      << " reference_unit.cpp)\n"
         "# Only the reference needs kforge/kernel.h; the export brings what it needs itself.\n"
         "target_include_directories(check PRIVATE ${TASK_DIR} ${KFORGE_RUNTIME_DIR})\n"
         "target_compile_features(check PRIVATE cxx_std_20)\n"
         "target_link_libraries(check PRIVATE "
      << library << ")\n";
  Consumer c{.build = src / "build"};
  ProcessResult conf =
      run({"cmake", "-S", src.string(), "-B", c.build.string(), "-G", "Ninja",
           "-DCMAKE_BUILD_TYPE=Release", "-DEXPORT_DIR=" + export_dir.string(),
           "-DTASK_DIR=" + kTask.string(),
           "-DKFORGE_RUNTIME_DIR=" + (testing::source_dir() / "runtime").string()});
  c.log = describe(conf);
  if (!conf.ok()) return c;
  ProcessResult b = run({"cmake", "--build", c.build.string(), "-j2"});
  c.log += describe(b);
  c.built = b.ok();
  return c;
}

// The program checks the export against the reference, and fails once an element is perturbed.
void expect_checks(const Consumer& c) {
  ASSERT_TRUE(c.built) << c.log;
  const std::string bin = (c.build / "check").string();
  // Two threads: a kernel with OpenMP loops runs them in parallel.
  ProcessResult ok = run({bin}, {{"OMP_NUM_THREADS", "2"}});
  EXPECT_TRUE(ok.ok()) << describe(ok);
  EXPECT_EQ(ok.out, "OK\n");
  ProcessResult bad = run({bin, "--perturb"}, {{"OMP_NUM_THREADS", "2"}});
  EXPECT_EQ(bad.exit_code, 1) << describe(bad);
  EXPECT_TRUE(contains(bad.out, "MISMATCH")) << bad.out;
}

// The defined external symbols of the exported library.
std::string library_symbols(const Consumer& c, const std::string& library) {
  ProcessResult nm = run({"nm", "-g", "--defined-only", "-C",
                          (c.build / "exported" / ("lib" + library + ".a")).string()});
  EXPECT_TRUE(nm.ok()) << describe(nm);
  return nm.out;
}

// avx2 where this CPU has it (the test runs what it builds), else scalar.
std::string other_target() {
  return __builtin_cpu_supports("avx2") ? "avx2" : "scalar";
}

TEST(ExportCli, AGeneratedBestBuildsInAFreshProjectInANamespaceAndWithCLinkage) {
  const fs::path db = temp_root() / "generated" / "runs.db";
  fs::create_directories(db.parent_path());
  const std::string id = optimize(db, {"--budget-evals", "3", "--no-profile"});
  const fs::path ns_dir = temp_root() / "generated_ns";
  // A unique prefix of the id names the run.
  ProcessResult r = run_kforge({"export", id.substr(0, id.size() - 1), "--store", db.string(),
                                "--namespace", "acme::fast", "-o", ns_dir.string()});
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_TRUE(contains(r.out, "exported rmsnorm from run " + id)) << r.out;
  const std::string header = slurp(ns_dir / "rmsnorm.h");
  EXPECT_TRUE(contains(header, "namespace acme::fast {")) << header;
  EXPECT_TRUE(contains(header,
                       "void rmsnorm(const float* x, const float* w, float* y, int64_t N, "
                       "int64_t D, float eps);"))
      << header;
  EXPECT_TRUE(contains(header, "run " + id)) << "provenance";
  EXPECT_TRUE(contains(header, ": generated (")) << header;
  EXPECT_TRUE(contains(header, "x the reference")) << "the measured speedup";
  const auto best = testing::open_store_at(db)->get_run(id)->best_candidate;
  EXPECT_TRUE(contains(header, "candidate " + best)) << header;
  EXPECT_TRUE(contains(without_scope_lines(slurp(ns_dir / "rmsnorm.cpp"), "acme::fast"),
                       slurp(db.parent_path() / "out/best.cpp")))
      << "as judged: the stored source, unchanged inside the namespace";
  EXPECT_TRUE(fs::exists(ns_dir / "rmsnorm.sched"));
  EXPECT_TRUE(contains(slurp(ns_dir / "CMakeLists.txt"), "-march=native"));
  const Consumer cpp =
      build_consumer("consumer_ns", ns_dir, "kforge::rmsnorm", "acme::fast::rmsnorm", false);
  expect_checks(cpp);
  const std::string symbols = library_symbols(cpp, "rmsnorm");
  EXPECT_TRUE(contains(symbols, " T acme::fast::rmsnorm(float const*")) << symbols;
  EXPECT_FALSE(contains(symbols, "kforge_impl")) << symbols;

  // The same run with C linkage, generated again for another target, called from C.
  const fs::path c_dir = temp_root() / "generated_c";
  const std::string target = other_target();
  r = run_kforge({"export", id, "--store", db.string(), "--c-linkage", "--target", target, "-o",
                  c_dir.string()});
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_TRUE(contains(r.out, "regenerated from the candidate's schedule for " + target)) << r.out;
  EXPECT_TRUE(contains(slurp(c_dir / "rmsnorm.h"), "extern \"C\" {"));
  EXPECT_TRUE(contains(slurp(c_dir / "rmsnorm.cpp"), "codegen_cpp (target " + target + ")"));
  EXPECT_TRUE(contains(slurp(c_dir / "CMakeLists.txt"),
                       target == "avx2" ? "-march=x86-64-v3" : "CACHE STRING"));
  const Consumer c = build_consumer("consumer_c", c_dir, "rmsnorm", "rmsnorm", true);
  expect_checks(c);
  EXPECT_TRUE(contains(library_symbols(c, "rmsnorm"), " T rmsnorm\n"));
}

TEST(ExportCli, AWrittenTemplateBestBuildsWithoutKforgeHeadersAndKeepsItsHelpersInside) {
  const fs::path db = temp_root() / "written" / "runs.db";
  fs::create_directories(db.parent_path());
  const std::string id =
      optimize(db, {"--brain", "files", "--sources", kSources.string(), "--no-profile"});
  const nlohmann::json summary = testing::open_store_at(db)->get_run(id)->summary;
  // The kernel is about twice as fast as the reference, the run's first candidate.
  ASSERT_EQ(summary["best"]["kind"], "written") << summary.dump(2);

  const fs::path dir = temp_root() / "written_export";
  const std::string target = other_target();
  ProcessResult r =
      run_kforge({"export", id, "--store", db.string(), "--target", target, "-o", dir.string()});
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_TRUE(contains(r.out, "only the compile flags follow --target " + target)) << r.out;
  EXPECT_TRUE(fs::exists(dir / "include/kforge/kernel.h")) << "the kernel includes it";
  EXPECT_FALSE(fs::exists(dir / "rmsnorm.sched")) << "written source has no schedule";
  EXPECT_TRUE(contains(slurp(dir / "rmsnorm.h"), "namespace kforge_written_rmsnorm {"))
      << "the default namespace comes from the task's name";
  EXPECT_TRUE(contains(without_scope_lines(slurp(dir / "rmsnorm.cpp"), "kforge_written_rmsnorm"),
                       slurp(kSources / "template_rmsnorm.cpp")))
      << "the written source, unchanged";
  const Consumer c =
      build_consumer("consumer_written", dir, "rmsnorm", "kforge_written_rmsnorm::rmsnorm", false);
  expect_checks(c);
  const std::string symbols = library_symbols(c, "rmsnorm");
  EXPECT_TRUE(contains(symbols, "kforge_written_rmsnorm::rmsnorm(")) << symbols;
  EXPECT_FALSE(contains(symbols, "inverse_rms")) << "a helper leaked:\n" << symbols;
  EXPECT_FALSE(contains(symbols, "sum_of_squares")) << "a helper leaked:\n" << symbols;
}

// A run made through the store's API whose best is a kernel `kforge lower` generates for
// AVX-512 from a schedule with OpenMP loops and vector code: its prelude includes <immintrin.h>
// under `#if defined(__AVX512F__)` between helpers, which the export must keep out of the
// namespace, and its parallel loops make OpenMP an option of the CMake target.
TEST(ExportCli, AParallelVectorKernelBuildsWithOpenMp) {
  const fs::path dir = temp_root() / "parallel";
  fs::create_directories(dir);
  const std::string schedule = "parallel y.n\nvectorize y.d\nparallel ms_r.n\n";
  std::ofstream(dir / "par.sched") << schedule;
  ProcessResult lowered = run_kforge(
      {"lower", kTask.string(), "-s", (dir / "par.sched").string(), "--target", "avx512"});
  ASSERT_TRUE(lowered.ok()) << describe(lowered);
  ASSERT_TRUE(contains(lowered.out, "#if defined(__AVX512F__)\n#include <immintrin.h>"));
  const fs::path db = dir / "runs.db";
  {
    auto store = testing::open_store_at(db);
    ASSERT_TRUE(store
                    ->put_candidate({.key = "par1",
                                     .source = lowered.out,
                                     .schedule = schedule,
                                     .provenance = {{"kind", "generated"}, {"origin", "test"}}})
                    .ok());
    ASSERT_TRUE(store
                    ->create_run({.id = "r-par",
                                  .task_dir = kTask.string(),
                                  .task_name = "written_rmsnorm",
                                  .mode = "optimize",
                                  .brain = "builtin"})
                    .ok());
    ASSERT_TRUE(store->update_run("r-par", "finished", "par1", nlohmann::json::object()).ok());
  }
  const fs::path out = dir / "export";
  ProcessResult r = run_kforge({"export", "r-par", "--store", db.string(), "-o", out.string()});
  ASSERT_TRUE(r.ok()) << describe(r);
  EXPECT_TRUE(contains(slurp(out / "CMakeLists.txt"), "option(RMSNORM_OPENMP"));
  EXPECT_TRUE(contains(slurp(out / "rmsnorm.h"), "OMP_NUM_THREADS"));
  const std::string cpp = slurp(out / "rmsnorm.cpp");
  EXPECT_TRUE(contains(cpp,
                       "#if defined(__AVX512F__)\n}  // namespace\n}  // namespace "
                       "kforge_written_rmsnorm::kforge_impl\n#include <immintrin.h>\n"))
      << cpp;
  const Consumer c =
      build_consumer("consumer_parallel", out, "rmsnorm", "kforge_written_rmsnorm::rmsnorm", false);
  expect_checks(c);
  // OpenMP is on by default: the parallel loops call its runtime.
  ProcessResult nm = run({"nm", "-u", (c.build / "exported" / "librmsnorm.a").string()});
  EXPECT_TRUE(contains(nm.out, "GOMP_parallel")) << describe(nm);
}

// A store made through the store's API: a run with a written best (the fixture's fast source),
// two runs without one whose ids share a prefix.
fs::path refusal_store() {
  const fs::path db = temp_root() / "refusals" / "runs.db";
  fs::create_directories(db.parent_path());
  auto store = testing::open_store_at(db);
  const std::string source =
      slurp(testing::source_dir() / "tests/integration/written_source/sources/a_unrolled.cpp");
  KF_CHECK(store
               ->put_candidate({.key = "c0ffee",
                                .source = source,
                                .provenance = {{"kind", "written"}, {"origin", "a_unrolled"}}})
               .ok());
  for (const char* id : {"r-best", "r-none-1", "r-none-2"})
    KF_CHECK(store
                 ->create_run({.id = id,
                               .task_dir = kTask.string(),
                               .task_name = "written_rmsnorm",
                               .mode = "optimize",
                               .brain = "files"})
                 .ok());
  KF_CHECK(store->update_run("r-best", "finished", "c0ffee", nlohmann::json::object()).ok());
  return db;
}

// kforge export with these arguments fails with exit 2 and one line naming `message`.
void expect_refused(const std::vector<std::string>& args, const std::string& message) {
  std::vector<std::string> argv = {"export"};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessResult r = run_kforge(argv);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_EQ(r.signal, 0) << describe(r);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_TRUE(r.err.starts_with("error: ")) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(contains(r.err, message)) << r.err;
}

TEST(ExportCli, RefusesWhatItCannotExportWithOneLine) {
  const fs::path db = refusal_store();
  const fs::path out = temp_root() / "refused_out";
  const std::vector<std::string> to = {"--store", db.string(), "-o", out.string()};
  auto with = [&](std::vector<std::string> a) {
    a.insert(a.end(), to.begin(), to.end());
    return a;
  };
  expect_refused(with({"r-nothing"}), "no run 'r-nothing' in the store");
  expect_refused(with({"r-none"}), "run id prefix 'r-none' matches 2 runs");
  expect_refused(with({"r-none-1"}), "run r-none-1 (running) has no best kernel to export");
  expect_refused(with({"r-best", "--target", "sse9"}),
                 "unknown target 'sse9': known targets are native, avx512, avx2, scalar");
  expect_refused(with({"r-best", "--namespace", "a::class"}),
                 "--namespace 'a::class' is not a C++ namespace name");
  expect_refused(with({"r-best", "--task", (temp_root() / "no_task").string()}),
                 "the task of run r-best");
  expect_refused({"r-best", "--store", (temp_root() / "no.db").string(), "-o", out.string()},
                 "no run store at");
  EXPECT_FALSE(fs::exists(out)) << "a refused export writes nothing";
  EXPECT_FALSE(fs::exists(temp_root() / "no.db")) << "nor makes a store";

  // An output directory that cannot be made: a file stands where its parent should be (root
  // writes anywhere a mode bit would forbid).
  const fs::path file = temp_root() / "a_file";
  std::ofstream(file) << "x";
  expect_refused({"r-best", "--store", db.string(), "-o", (file / "sub").string()},
                 "cannot create the output directory");

  // The same run exports where it can write.
  ProcessResult r = run_kforge(with({"export", "r-best"}));
  EXPECT_TRUE(r.ok()) << describe(r);
  EXPECT_TRUE(fs::exists(out / "rmsnorm.cpp"));
  EXPECT_TRUE(r.err.empty()) << "a finished run, no task identity to compare: " << r.err;
}

}  // namespace
}  // namespace kf
