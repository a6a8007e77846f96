// Small inline tasks for the TE tests: a signature and shapes around a spec, and a runner that
// compiles a spec and interprets it on given inputs.
//
//   auto t = te_task(kGemmSig, kGemmShapes, "C[i, j] = sum(k: A[i, k] * B[k, j])\n");
//   auto out = te_run(*t, {{"M", 2}, {"N", 2}, {"K", 1}}, {{1, 2}, {3, 4}, {0, 0}});
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "task/task.h"
#include "te/compile.h"

namespace kf::te {

inline std::string te_task_toml(const std::string& signature, const std::string& shapes,
                                const std::string& spec) {
  return "name = \"t\"\ncategory = \"test\"\ndtype = \"f32\"\n\n[signature]\nfunction = \"f\"\n" +
         signature + "\n[shapes]\n" + shapes +
         "\n[tolerance]\nf32 = { rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }\n\n[cost]\n"
         "flops = \"1\"\n\n[te]\nspec = \"\"\"\n" +
         spec + "\"\"\"\n";
}

inline Task te_task(const std::string& signature, const std::string& shapes,
                    const std::string& spec) {
  auto t = parse_task(te_task_toml(signature, shapes, spec), "dir/task.toml");
  EXPECT_TRUE(t) << t.error().message();
  return t ? *t : Task{};
}

// GEMM plus an index vector and a float scalar; M, N, K all differ at the test shapes.
inline const std::string kGemmSig = R"(dims = ["M", "N", "K"]
inputs = [
  { name = "A", dtype = "f32", shape = ["M", "K"] },
  { name = "B", dtype = "f32", shape = ["K", "N"] },
  { name = "ids", dtype = "i32", shape = ["M"], dist = { kind = "randint", hi = "K" } },
]
outputs = [ { name = "C", dtype = "f32", shape = ["M", "N"] } ]
scalars = [ { name = "alpha", dtype = "f32", default = 1.0 } ]
)";
inline const std::string kGemmShapes = R"(bench = { M = 4, N = 5, K = 3 }
tests = [ { M = 1, N = 2, K = 3 }, { M = 3, N = 9, K = 2 } ]
)";

// Rows of X[N, D] with a weight w[D], a length per row and an eps; Y[N, D] out.
inline const std::string kRowsSig = R"(dims = ["N", "D"]
inputs = [
  { name = "X", dtype = "f32", shape = ["N", "D"] },
  { name = "w", dtype = "f32", shape = ["D"] },
  { name = "lens", dtype = "i32", shape = ["N"], dist = { kind = "randint", hi = "D" } },
]
outputs = [ { name = "Y", dtype = "f32", shape = ["N", "D"] } ]
scalars = [ { name = "eps", dtype = "f32", default = 0.0 } ]
)";
inline const std::string kRowsShapes = R"(bench = { N = 4, D = 5 }
tests = [ { N = 1, D = 3 }, { N = 3, D = 9 } ]
)";

// Runs the task's spec at `point` on `inputs` (row-major doubles); returns the outputs.
inline std::vector<std::vector<double>> te_run(const Task& task, const ShapePoint& point,
                                               const std::vector<std::vector<double>>& inputs,
                                               std::string* error = nullptr) {
  auto p = compile_spec(task);
  EXPECT_TRUE(p) << p.error().message();
  if (!p) return {};
  auto inst = task.instantiate(point);
  EXPECT_TRUE(inst) << inst.error().message();
  if (!inst) return {};
  std::vector<const double*> in;
  for (size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(inputs[i].size(), inst->elements[i]) << "test bug: input " << i << " size";
    in.push_back(inputs[i].data());
  }
  std::vector<std::vector<double>> out(task.outputs.size());
  std::vector<double*> out_ptr;
  for (size_t j = 0; j < out.size(); ++j) {
    out[j].assign(inst->elements[inputs.size() + j], -12345.0);
    out_ptr.push_back(out[j].data());
  }
  Status s = interpret(*p, task, *inst, in, out_ptr);
  if (error) *error = s.ok() ? "" : s.message();
  if (!error) {
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return out;
}

}  // namespace kf::te
