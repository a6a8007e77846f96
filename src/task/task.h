// A kforge task: what to compute (signature, reference, optional TE spec), at which shapes,
// how outputs are checked (tolerance) and costed (FLOP and byte formulas). See
// docs/task-format.md for the file format.
//
//   Expected<Task> task = load_task("bench/jaxbench/08_gemm");
//   if (!task) { print(task.error().message()); return; }   // "…/task.toml:12:3: expected …"
//   Expected<ShapeInstance> s = task->instantiate(task->bench);
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"
#include "task/dtype.h"
#include "task/formula.h"

namespace kf {

enum class DistKind { normal, uniform, positive, randint, partition, offsets, constant };

struct Distribution {
  DistKind kind = DistKind::normal;
  double a = 0, b = 1;  // normal: mean, std; uniform/positive: lo, hi; randint: lo; constant: a
  std::optional<Formula> bound;  // randint: hi (exclusive); partition/offsets: total
  bool sorted = false;           // randint
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::f32;
  std::vector<Formula> shape;
  Distribution dist;  // inputs only
};

struct ScalarSpec {
  std::string name;
  DType dtype = DType::f32;
  double default_value = 0;
};

struct Tolerance {
  double rel_l2 = 0, atol = 0, rtol = 0;
};

// One entry of [shapes]: values for dims and (optionally) scalar overrides.
using ShapePoint = std::map<std::string, double>;

struct Baseline {
  std::string file, name;
  std::vector<std::string> libs;
};

// A shape point with everything resolved: dims, scalars, derived sizes, tensor extents.
struct ShapeInstance {
  std::vector<int64_t> dims;                  // in signature.dims order
  std::vector<double> scalars;                // in signature.scalars order
  Bindings env;                               // dims + derived + scalars by name
  std::vector<std::vector<int64_t>> extents;  // inputs then outputs
  std::vector<size_t> elements;               // inputs then outputs
  size_t buffer_bytes = 0;  // one set of every input and output (<= shape_memory_limit())
  double flops = 0, bytes = 0;
  std::string text;  // "M=17 N=33 K=9 eps=1e-06": dims in order, then scalars
  const std::string& label() const { return text; }
};

struct Task {
  std::filesystem::path dir;
  std::string name, category, description;
  DType dtype = DType::f32;
  std::string function;
  std::vector<std::string> dims;
  std::vector<std::pair<std::string, Formula>> derived;
  std::vector<TensorSpec> inputs, outputs;
  std::vector<ScalarSpec> scalars;
  ShapePoint bench;
  std::vector<ShapePoint> tests;
  std::map<DType, Tolerance> tolerance;
  Formula flops = Formula::constant(0);
  std::optional<Formula> bytes;  // default: compulsory traffic of all tensors
  std::string te_spec;           // "" when the task has none
  int te_line = 0;               // line of task.toml where te_spec's first line is
  std::optional<Baseline> baseline;
  std::string reference_source;  // contents of reference.cpp

  size_t tensor_count() const { return inputs.size() + outputs.size(); }
  const TensorSpec& tensor(size_t i) const {
    return i < inputs.size() ? inputs[i] : outputs[i - inputs.size()];
  }
  const Tolerance& tolerance_for(DType t) const;

  // Resolves a shape point. Fails if a dim is not an integer in [0, 2^53], a scalar is not
  // finite, a size is negative or a formula cannot be evaluated, a tensor's element count or
  // byte size overflows, the buffers of one set of inputs and outputs together exceed
  // shape_memory_limit(), or the FLOP or byte count is negative. Allocates nothing, so a caller
  // that allocates after it never asks for more than the limit.
  Expected<ShapeInstance> instantiate(const ShapePoint& p) const;

  // A stable hash of everything that defines the task's semantics (for evaluation keys).
  std::string content_hash() const;
};

// The most bytes one set of a shape's inputs and outputs may take: a quarter of this machine's
// physical memory (the judge holds several input sets, the oracle's copy and the reference's
// outputs at once), or $KFORGE_SHAPE_MEMORY_LIMIT bytes when that is set to a positive integer.
size_t shape_memory_limit();

// Loads and validates TASK_DIR/task.toml and TASK_DIR/reference.cpp. Errors read
// "PATH:LINE:COL: what was expected".
Expected<Task> load_task(const std::filesystem::path& dir);

// Parses task.toml text (for tests); `path` is used in messages.
Expected<Task> parse_task(const std::string& toml_text, const std::filesystem::path& path);

}  // namespace kf
