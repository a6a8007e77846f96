// compile_spec and the TE oracle against the task references: for every bundled task with a
// `[te] spec`, the interpreter and reference<double> (run by the harness's worker) agree to
// rel_l2 < 1e-12 on every test shape (both are f64; only summation order differs).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "harness/sandbox.h"
#include "harness/shim.h"
#include "harness/toolchain.h"
#include "task/inputs.h"
#include "te/compile.h"

namespace kf::te {
namespace {

namespace fs = std::filesystem;

fs::path suite_dir() {
  return fs::path(KFORGE_TEST_SOURCE_DIR) / "bench" / "jaxbench";
}

TEST(CompileSpec, CompilesGemmAndNamesTheFile) {
  auto task = load_task(suite_dir() / "08_gemm");
  ASSERT_TRUE(task) << task.error().message();
  auto p = compile_spec(*task);
  ASSERT_TRUE(p) << p.error().message();
  ASSERT_EQ(p->stages.size(), 1u);
  EXPECT_EQ(p->output_stage, std::vector<int>{0});
  EXPECT_EQ(p->file, (suite_dir() / "08_gemm" / "task.toml").string());
}

TEST(CompileSpec, ErrorsCarryTheTaskFileAndLine) {
  auto task = load_task(suite_dir() / "08_gemm");
  ASSERT_TRUE(task);
  task->te_spec = "C[i, j] = sum(k: A[i, k] * Q[k, j])\n";
  auto p = compile_spec(*task);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message(),
            spec_file(*task) + ":" + std::to_string(task->te_line) +
                ":28: unknown tensor 'Q': expected an input, an output or an intermediate "
                "defined above");
}

TEST(CompileSpec, FailsWithoutSpec) {
  auto task = load_task(suite_dir() / "08_gemm");
  ASSERT_TRUE(task);
  task->te_spec.clear();
  auto p = compile_spec(*task);
  ASSERT_FALSE(p);
  EXPECT_EQ(p.error().message(), spec_file(*task) + ": the task has no [te] spec");
}

double rel_l2(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return den == 0 ? std::sqrt(num) : std::sqrt(num / den);
}

// Runs reference<double> and the interpreter on the same inputs at every test shape.
void cross_check(const fs::path& dir) {
  auto task = load_task(dir);
  ASSERT_TRUE(task) << task.error().message();
  auto prog = compile_spec(*task);
  ASSERT_TRUE(prog) << prog.error().message();
  CompiledObject obj =
      compile_solution(task->reference_source, entry_shim(*task, ShimKind::oracle), {});
  ASSERT_TRUE(obj.info.ok) << obj.info.log;
  const size_t ni = task->inputs.size();
  for (const ShapePoint& point : task->tests) {
    auto inst = task->instantiate(point);
    ASSERT_TRUE(inst) << inst.error().message();
    SCOPED_TRACE(task->name + " at " + inst->label());
    WorkerSpec spec{.so = obj.so_path, .dims = inst->dims, .scalars = inst->scalars};
    for (size_t t = 0; t < task->tensor_count(); ++t)
      spec.layout.push_back(
          {task->tensor(t).name,
           inst->elements[t] * dtype_size(buffer_dtype(*task, t, ShimKind::oracle)), t < ni});
    auto worker = Worker::start(spec);
    ASSERT_TRUE(worker) << worker.error().message();
    ASSERT_EQ((*worker)->fault(), nullptr);
    std::vector<std::vector<double>> in(ni), out(task->outputs.size());
    std::vector<const double*> in_ptr;
    std::vector<double*> out_ptr;
    for (size_t i = 0; i < ni; ++i) {
      const DType dt = task->inputs[i].dtype;
      std::vector<char> raw(inst->elements[i] * dtype_size(dt) + 1);
      ASSERT_TRUE(generate_input(*task, *inst, i, 1234 + i, raw.data()).ok());
      const DType to = buffer_dtype(*task, i, ShimKind::oracle);
      for (size_t e = 0; e < inst->elements[i]; ++e) {
        const double v = load_as_double(raw.data(), dt, e);
        in[i].push_back(v);
        store_from_double((*worker)->buffer(0, i), to, e, v);
      }
      in_ptr.push_back(in[i].data());
    }
    for (size_t j = 0; j < out.size(); ++j) {
      out[j].assign(inst->elements[ni + j], std::nan(""));
      out_ptr.push_back(out[j].data());
    }
    RunOutcome r = (*worker)->run(0, 1, 60);
    ASSERT_TRUE(r.ok) << r.message;
    Status st = interpret(*prog, *task, *inst, in_ptr, out_ptr);
    ASSERT_TRUE(st.ok()) << st.message();
    for (size_t j = 0; j < out.size(); ++j) {
      const size_t t = ni + j;
      const DType dt = buffer_dtype(*task, t, ShimKind::oracle);
      std::vector<double> want(inst->elements[t]);
      for (size_t e = 0; e < want.size(); ++e)
        want[e] = load_as_double((*worker)->buffer(0, t), dt, e);
      EXPECT_LT(rel_l2(out[j], want), 1e-12) << "output " << task->outputs[j].name;
    }
  }
}

TEST(CompileSpec, EveryBundledSpecMatchesItsReference) {
  int checked = 0;
  for (const auto& entry : fs::directory_iterator(suite_dir())) {
    if (!fs::exists(entry.path() / "task.toml")) continue;
    auto task = load_task(entry.path());
    ASSERT_TRUE(task) << task.error().message();
    if (task->te_spec.empty()) continue;
    cross_check(entry.path());
    ++checked;
  }
  EXPECT_GE(checked, 5);
}

}  // namespace
}  // namespace kf::te
