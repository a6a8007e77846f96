#include "task/task_skeleton.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "support/json_text.h"
#include "support/text_scan.h"
#include "task/reference_convert.h"
#include "task/toml_text.h"

namespace kf {
namespace {

// A TOML basic string: quotes, backslashes and control characters escaped, valid UTF-8.
std::string toml_string(std::string_view raw) {
  std::string out = "\"";
  for (char c : sanitize_utf8(raw)) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += fmt::format("\\u{:04X}", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A TOML float ("1.0", "1e-06"), never an integer literal.
std::string toml_float(double v) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".eEni") == std::string::npos) s += ".0";
  return s;
}

// Text for a comment: one line, control characters as spaces.
std::string one_line(std::string_view raw) {
  std::string s = sanitize_utf8(raw);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  return s;
}

std::string names_list(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + toml_string(n);
  return "[" + s + "]";
}

// The C++ signature a candidate defines (what harness/shim.h's candidate_signature gives once the
// task loads).
std::string abi_signature(const ParsedSignature& sig, DType dtype) {
  std::string params;
  for (const SignatureParam& p : sig.abi_order()) {
    std::string type;
    switch (p.role) {
      case ParamRole::input:
      case ParamRole::output:
        type = fmt::format("{}{}*", p.role == ParamRole::input ? "const " : "",
                           dtype_cpp(p.element ? dtype : p.dtype));
        break;
      case ParamRole::dim:
        type = "int64_t";
        break;
      case ParamRole::scalar:
        type = std::string(scalar_cpp(dtype));
        break;
    }
    params += (params.empty() ? "" : ", ") + type + " " + p.name;
  }
  return fmt::format("void {}({})", sig.function, params);
}

std::string tensors_toml(const ParsedSignature& sig, DType dtype, ParamRole role) {
  std::string s;
  for (const SignatureParam& p : sig.params) {
    if (p.role != role) continue;
    const DType d = p.element ? dtype : p.dtype;
    s += fmt::format("  {{ name = {}, dtype = \"{}\", shape = \"{}\"", toml_string(p.name),
                     dtype_name(d), kPlaceholder);
    if (role == ParamRole::input)
      s += is_floating(d) ? ", dist = { kind = \"normal\", mean = 0.0, std = 1.0 }"
                          : fmt::format(", dist = {{ kind = \"randint\", lo = 0, hi = \"{}\" }}",
                                        kPlaceholder);
    s += " },\n";
  }
  return s;
}

std::string shapes_toml(const std::vector<std::string>& dims) {
  std::string point;
  for (const auto& d : dims)
    point += fmt::format("{}{} = \"{}\"", point.empty() ? "" : ", ", d, kPlaceholder);
  point = "{ " + point + " }";
  return fmt::format(
      "[shapes]\n"
      "# The timed shape: aim for 0.05-2 s per call of the reference (kforge check --time says).\n"
      "bench = {0}\n"
      "# Checked for correctness on fresh inputs, never timed: keep them small. They must include\n"
      "# a shape with some dim equal to 1 and one with a dim >= 2 that is not a multiple of 8, so\n"
      "# no kernel can assume vector-width multiples. A shape may also set a scalar (eps = 0.5).\n"
      "tests = [\n"
      "  {0},  # e.g. every dim 1\n"
      "  {0},  # e.g. odd sizes: 3, 17, 33\n"
      "  {0},  # e.g. a few hundred elements per dim\n"
      "]\n",
      point);
}

// One placeholder found in task.toml: where it is (keys and "[i]" indices) and the name of the
// tensor or scalar whose table holds it.
struct Found {
  std::vector<std::string> path;
  std::string owner;
  int line = 0, column = 0;
};

// Every string value equal to kPlaceholder, walking the tree with a stack (toml++ bounds the
// nesting; nothing here recurses).
std::vector<Found> find_placeholders(const toml::table& root) {
  struct Item {
    const toml::node* node;
    std::vector<std::string> path;
    std::string owner;
  };
  std::vector<Found> out;
  std::vector<Item> stack = {{&root, {}, ""}};
  while (!stack.empty()) {
    Item it = std::move(stack.back());
    stack.pop_back();
    if (const toml::table* t = it.node->as_table()) {
      std::string owner = it.owner;
      if (const toml::node* n = t->get("name"); n && n->is_string()) owner = n->as_string()->get();
      for (const auto& [k, v] : *t) {
        std::vector<std::string> p = it.path;
        p.emplace_back(k.str());
        stack.push_back({&v, std::move(p), owner});
      }
    } else if (const toml::array* a = it.node->as_array()) {
      for (size_t i = 0; i < a->size(); ++i) {
        std::vector<std::string> p = it.path;
        p.push_back(fmt::format("[{}]", i));
        stack.push_back({a->get(i), std::move(p), it.owner});
      }
    } else if (it.node->is_string() && it.node->as_string()->get() == kPlaceholder) {
      const auto& at = it.node->source().begin;
      out.push_back({it.path, it.owner, static_cast<int>(at.line), static_cast<int>(at.column)});
    }
  }
  std::sort(out.begin(), out.end(), [](const Found& a, const Found& b) {
    return std::pair(a.line, a.column) < std::pair(b.line, b.column);
  });
  return out;
}

bool has_prefix(const std::vector<std::string>& path, std::initializer_list<const char*> prefix) {
  size_t i = 0;
  for (const char* p : prefix) {
    if (i >= path.size() || (std::string_view(p) != "*" && path[i] != p)) return false;
    ++i;
  }
  return true;
}

std::string join_path(const std::vector<std::string>& path) {
  std::string s;
  for (const auto& p : path) s += (s.empty() || p[0] == '[' ? "" : ".") + p;
  return s;
}

// One line per field: the bench shape's placeholders together, the test shapes' together.
std::vector<MissingField> describe(const std::vector<Found>& found, const std::string& dims_eg) {
  std::vector<MissingField> out;
  std::vector<std::string> bench_dims;
  std::set<std::string> test_shapes;
  std::vector<std::string> test_keys;  // in the order found
  int bench_line = 0, tests_line = 0;
  for (const Found& f : found) {
    const std::string& last = f.path.back();
    const std::string who = "'" + excerpt(f.owner, 40) + "'";
    if (has_prefix(f.path, {"shapes", "bench", "*"})) {
      bench_dims.push_back(excerpt(last, 40));
      bench_line = bench_line ? std::min(bench_line, f.line) : f.line;
    } else if (has_prefix(f.path, {"shapes", "tests", "*", "*"})) {
      test_shapes.insert(f.path[2]);
      if (std::find(test_keys.begin(), test_keys.end(), excerpt(last, 40)) == test_keys.end())
        test_keys.push_back(excerpt(last, 40));
      tests_line = tests_line ? std::min(tests_line, f.line) : f.line;
    } else if (has_prefix(f.path, {"signature", "*", "*", "shape"}) &&
               (f.path[1] == "inputs" || f.path[1] == "outputs")) {
      out.push_back({"task.toml", f.line,
                     fmt::format("[signature] {} {}: no shape yet (one formula per axis over the "
                                 "dims, row-major, e.g. {})",
                                 f.path[1] == "inputs" ? "input" : "output", who, dims_eg)});
    } else if (has_prefix(f.path, {"signature", "inputs", "*", "dist", "*"})) {
      out.push_back({"task.toml", f.line,
                     fmt::format("[signature] input {}: dist.{} not given yet (for randint, the "
                                 "exclusive upper bound of the integers: a formula such as \"N\")",
                                 who, excerpt(last, 40))});
    } else if (has_prefix(f.path, {"cost", "flops"})) {
      out.push_back({"task.toml", f.line,
                     "[cost] flops: no formula yet (floating-point operations per call, over the "
                     "dims)"});
    } else if (has_prefix(f.path, {"cost", "bytes"})) {
      out.push_back({"task.toml", f.line,
                     "[cost] bytes: no formula yet (bytes read and written per call; delete the "
                     "line for the default: every tensor read or written once)"});
    } else {
      out.push_back({"task.toml", f.line,
                     fmt::format("{} is still \"{}\": give it a value",
                                 excerpt(join_path(f.path), 80), kPlaceholder)});
    }
  }
  auto list = [](const auto& names) {
    std::string s;
    for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s;
  };
  if (!bench_dims.empty())
    out.push_back({"task.toml", bench_line,
                   fmt::format("[shapes] bench: no value yet for {} (the timed shape: aim for "
                               "0.05-2 s per call of the reference)",
                               list(bench_dims))});
  if (!test_shapes.empty())
    out.push_back(
        {"task.toml", tests_line,
         fmt::format("[shapes] tests: no value yet for {} in {} test shape{} (small; "
                     "one with a dim equal to 1, one with a dim >= 2 that is not a "
                     "multiple of 8)",
                     list(test_keys), test_shapes.size(), test_shapes.size() == 1 ? "" : "s")});
  return out;
}

// Lines of reference.cpp holding the TODO(kforge) marker, with the text after it.
// At most kMaxMissingFields + 1 lines are kept; *extra counts the rest.
std::vector<MissingField> reference_todos(std::string_view text, size_t* extra) {
  std::vector<MissingField> out;
  size_t start = 0;
  int line = 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view l = text.substr(start, end - start);
    if (const size_t at = l.find(kReferenceTodo);
        at != std::string_view::npos && out.size() > kMaxMissingFields) {
      ++*extra;
    } else if (at != std::string_view::npos) {
      std::string_view rest = l.substr(at + kReferenceTodo.size());
      while (!rest.empty() && (rest.front() == ':' || rest.front() == ' ')) rest.remove_prefix(1);
      while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
      out.push_back({"reference.cpp", line,
                     rest.empty() ? std::string(kReferenceTodo) + " (a marker left to resolve)"
                                  : excerpt(rest, 200)});
    }
    start = end + 1;
    ++line;
  }
  return out;
}

// An example of a derived size over the task's dims: `total = "M * N"`.
std::string derived_eg(const std::vector<std::string>& dims) {
  if (dims.size() >= 2) return fmt::format("total = \"{} * {}\"", dims[0], dims[1]);
  if (dims.size() == 1) return fmt::format("half = \"{} / 2\"", dims[0]);
  return "four = \"4\"";
}

}  // namespace

std::string default_tolerance(DType dtype) {
  switch (dtype) {
    case DType::f64:
      return "{ rel_l2 = 1e-12, atol = 1e-12, rtol = 1e-10 }";
    case DType::bf16:
      return "{ rel_l2 = 1e-2, atol = 1e-3, rtol = 1e-2 }";
    case DType::f32:
    case DType::i32:
    case DType::i64:
      return "{ rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }";
  }
  return "";
}

std::string skeleton_toml(const ParsedSignature& sig, const SkeletonOptions& o) {
  std::vector<std::string> dims;
  for (const SignatureParam& p : sig.params)
    if (p.role == ParamRole::dim) dims.push_back(p.name);
  std::string product;
  for (const auto& d : dims) product += " * " + d;
  const std::string shape_eg =
      dims.empty()       ? "[\"4\"]"
      : dims.size() == 1 ? names_list({dims[0]})
                         : names_list({dims[0]}) + " or " + names_list({dims[0], dims[1]});
  std::string s = fmt::format(
      "# task.toml: written by `kforge new` from {0}.\n"
      "# Fill in every \"{1}\"; `kforge check` lists the ones left, then judges the reference.\n"
      "# The format: docs/task-format.md.\n\n"
      "name        = {2}  # the task's name (the folder's, by convention)\n"
      "category    = \"custom\"  # free text that groups tasks: gemm, norm, attention, fusion, "
      "...\n"
      "description = {3}  # optional, one line\n"
      "dtype       = \"{4}\"  # the dtype of every floating tensor and scalar: f32, f64 or bf16\n\n"
      "[signature]\n"
      "# The kernel, in the kernel ABI's order (inputs, outputs, dims, scalars). A candidate "
      "defines\n"
      "#   {5}\n"
      "function = {6}  # the function reference.cpp defines (and every candidate)\n"
      "dims     = {7}  # the sizes, passed as int64_t: shapes and formulas are over these\n"
      "# derived = {{ {8} }}  # optional: named formulas over dims and scalars\n"
      "# shape: one formula per axis over the dims, row-major, e.g. {9}.\n"
      "# dist: how the judge draws an input: normal, uniform, positive (for scales and\n"
      "# denominators), randint (indices, with hi = \"N\"), partition, offsets, constant.\n"
      "inputs   = [\n{10}]\n"
      "outputs  = [\n{11}]\n",
      one_line(o.origin), kPlaceholder, toml_string(o.name),
      toml_string("written by kforge new from " + o.origin), dtype_name(o.dtype),
      one_line(abi_signature(sig, o.dtype)), toml_string(sig.function), names_list(dims),
      derived_eg(dims), shape_eg, tensors_toml(sig, o.dtype, ParamRole::input),
      tensors_toml(sig, o.dtype, ParamRole::output));
  if (sig.count(ParamRole::scalar) == 0) {
    s += "# scalars = [ { name = \"alpha\", dtype = \"" + std::string(dtype_name(o.dtype)) +
         "\", default = 1.0 } ]  # optional run-time parameters\n";
  } else {
    s += "scalars  = [  # run-time parameters; a shape may override the default\n";
    for (const SignatureParam& p : sig.params)
      if (p.role == ParamRole::scalar)
        s += fmt::format("  {{ name = {}, dtype = \"{}\", default = {} }},\n", toml_string(p.name),
                         dtype_name(o.dtype), toml_float(p.default_value.value_or(1.0)));
    s += "]\n";
  }
  s += "\n" + shapes_toml(dims);
  s += fmt::format(
      "\n[tolerance]\n"
      "# Per floating dtype, against the f64 oracle y*: rel_l2 bounds ||y - y*|| / ||y*||, and\n"
      "# every element must satisfy |y - y*| <= atol + rtol * |y*|. The suite's usual values.\n"
      "{0} = {1}\n\n"
      "[cost]\n"
      "# Formulas over the dims, derived sizes and scalars, e.g. \"2{2}\"; evaluated in floating "
      "point.\n"
      "flops = \"{3}\"  # floating-point operations per call\n"
      "bytes = \"{3}\"  # bytes read and written per call; delete the line for the default:\n"
      "               # every input read and every output written once\n\n"
      "# [te]  optional: the computation in kforge's tensor-expression language (docs/te.md). "
      "With\n"
      "# it the built-in brain generates and schedules candidates, and `kforge check` checks it\n"
      "# against the reference. Without it, candidates come from the LLM brain or from you.\n"
      "# spec = \"\"\"\n# y[i] = x[i] * 2\n# \"\"\"\n\n"
      "# [baseline]  optional: an expert or library implementation to compare with.\n"
      "# file = \"baseline.cpp\"\n# name = \"my library\"\n# libs = []  # libraries it links\n",
      dtype_name(o.dtype), default_tolerance(o.dtype), product.empty() ? "" : product,
      kPlaceholder);
  return s;
}

std::string MissingField::text() const {
  return fmt::format("{}:{}: {}", file, line, what);
}

std::vector<MissingField> missing_fields(std::string_view toml_text,
                                         std::string_view reference_text) {
  std::vector<MissingField> out;
  auto root = parse_toml_text(std::string(toml_text), "task.toml", 0);
  if (root) {
    std::vector<std::string> dims;
    if (const toml::array* d = root->at_path("signature.dims").as_array())
      for (const toml::node& n : *d)
        if (n.is_string() && dims.size() < 2) dims.push_back(n.as_string()->get());
    const std::string dims_eg = dims.empty() ? "[\"N\"]" : names_list(dims);
    out = describe(find_placeholders(*root), dims_eg);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const MissingField& a, const MissingField& b) { return a.line < b.line; });
  size_t extra = 0;
  std::vector<MissingField> ref = reference_todos(reference_text, &extra);
  out.insert(out.end(), ref.begin(), ref.end());
  if (out.size() > kMaxMissingFields) {
    const size_t more = out.size() + extra - (kMaxMissingFields - 1);
    out.resize(kMaxMissingFields - 1);
    out.push_back({out.back().file, out.back().line, fmt::format("... and {} more", more)});
  }
  return out;
}

}  // namespace kf
