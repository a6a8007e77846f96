// Loading and validating task.toml. Every error names the file, the line and column of the
// offending value (or of the enclosing table when a key is missing) and what was expected.
#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "support/fs.h"
#include "support/text_scan.h"
#include "task/task.h"
#include "task/task_loader_internal.h"
#include "task/toml_text.h"

namespace kf {
namespace task_detail {

Expected<Task> Loader::load(const std::string& text) {
  auto parsed = parse_toml_text(text, path_.string(), 0);
  if (!parsed) return parsed.error();
  const toml::table& root = *parsed;
  KF_RETURN_IF_ERROR(known_keys(root,
                                {"name", "category", "description", "dtype", "signature", "shapes",
                                 "tolerance", "cost", "te", "baseline"},
                                "the task"));
  Task task;
  task.dir = path_.parent_path();
  KF_RETURN_IF_ERROR(load_header(root, task));
  std::set<std::string> known;  // what formulas may name: dims, scalars, derived sizes
  KF_RETURN_IF_ERROR(load_signature(root, task, known));
  KF_RETURN_IF_ERROR(load_cost(root, task, known));
  KF_RETURN_IF_ERROR(load_tolerance(root, task));
  KF_RETURN_IF_ERROR(load_shapes(root, task));
  KF_RETURN_IF_ERROR(load_te(root, text, task));
  KF_RETURN_IF_ERROR(load_baseline(root, task));
  return task;
}

Status Loader::load_header(const toml::table& root, Task& task) const {
  auto name = req_string(root, "name");
  if (!name) return name.error();
  task.name = *name;
  auto category = req_string(root, "category");
  if (!category) return category.error();
  task.category = *category;
  if (const toml::node* d = root.get("description")) {
    auto s = string_at(d, "description");
    if (!s) return s.error();
    task.description = *s;
  }
  auto dt = required(root, "dtype", "the task's floating dtype: f32, f64 or bf16");
  if (!dt) return dt.error();
  auto dtype = dtype_at(*dt, "dtype");
  if (!dtype) return dtype.error();
  if (!is_floating(*dtype)) return fail(*dt, "the task's dtype must be f32, f64 or bf16");
  task.dtype = *dtype;
  return ok_status();
}

Status Loader::load_signature(const toml::table& root, Task& task, std::set<std::string>& known) {
  auto sig_node = required(root, "signature", "a [signature] table");
  if (!sig_node) return sig_node.error();
  auto sig = table_at(*sig_node, "signature");
  if (!sig) return sig.error();
  KF_RETURN_IF_ERROR(known_keys(
      **sig, {"function", "dims", "derived", "inputs", "outputs", "scalars"}, "[signature]"));
  auto fn = req_string(**sig, "function");
  if (!fn) return fn.error();
  task.function = *fn;
  KF_RETURN_IF_ERROR(check_identifier((*sig)->get("function"), task.function, "function"));
  auto dims = required(**sig, "dims", "a list of dim names, e.g. [\"M\", \"N\"]");
  if (!dims) return dims.error();
  auto dims_arr = array_at(*dims, "dims");
  if (!dims_arr) return dims_arr.error();
  KF_RETURN_IF_ERROR(at_most(*dims, (*dims_arr)->size(), kMaxNames, "dims"));
  for (const toml::node& d : **dims_arr) {
    auto s = string_at(&d, "dims");
    if (!s) return s.error();
    KF_RETURN_IF_ERROR(check_identifier(&d, *s, "dim"));
    task.dims.push_back(*s);
  }
  if (const toml::node* sc = (*sig)->get("scalars")) KF_RETURN_IF_ERROR(load_scalars(sc, task));
  if (const toml::node* dn = (*sig)->get("derived")) {
    auto t = table_at(dn, "derived");
    if (!t) return t.error();
    KF_RETURN_IF_ERROR(at_most(dn, (*t)->size(), kMaxNames, "derived sizes"));
    for (const auto& [k, v] : **t) {
      std::string key(k.str());
      KF_RETURN_IF_ERROR(check_identifier(&v, key, "derived size"));
      auto f = formula_at(&v, key);
      if (!f) return f.error();
      task.derived.emplace_back(key, *f);
    }
  }
  KF_RETURN_IF_ERROR(load_tensors(**sig, task));
  // Every formula may only name dims, derived sizes and scalars.
  known.insert(task.dims.begin(), task.dims.end());
  for (const auto& s : task.scalars) known.insert(s.name);
  for (const auto& [k, f] : task.derived) {
    KF_RETURN_IF_ERROR(check_names(f, (*sig)->get("derived"), known));
    known.insert(k);
  }
  for (size_t i = 0; i < task.tensor_count(); ++i)
    for (const auto& f : task.tensor(i).shape) KF_RETURN_IF_ERROR(check_names(f, *sig_node, known));
  return ok_status();
}

Status Loader::load_scalars(const toml::node* sc, Task& task) {
  auto arr = array_at(sc, "scalars");
  if (!arr) return arr.error();
  KF_RETURN_IF_ERROR(at_most(sc, (*arr)->size(), kMaxNames, "scalars"));
  for (const toml::node& e : **arr) {
    auto t = table_at(&e, "scalars");
    if (!t) return t.error();
    ScalarSpec s;
    KF_RETURN_IF_ERROR(known_keys(**t, {"name", "dtype", "default"}, "a scalar"));
    auto nm = req_string(**t, "name");
    if (!nm) return nm.error();
    s.name = *nm;
    KF_RETURN_IF_ERROR(check_identifier((*t)->get("name"), s.name, "scalar name"));
    auto sdt = required(**t, "dtype", "f32, f64, bf16, i32 or i64");
    if (!sdt) return sdt.error();
    auto sd = dtype_at(*sdt, "dtype");
    if (!sd) return sd.error();
    s.dtype = *sd;
    if (is_floating(s.dtype) && s.dtype != task.dtype)
      return fail(*sdt, "floating scalar '" + s.name + "' must have the task's dtype");
    auto dv = required(**t, "default", "a number");
    if (!dv) return dv.error();
    auto x = number_at(*dv, "default");
    if (!x) return x.error();
    s.default_value = *x;
    KF_RETURN_IF_ERROR(integer_scalar_value(*dv, s, *x));
    task.scalars.push_back(s);
  }
  return ok_status();
}

Status Loader::load_tensors(const toml::table& sig, Task& task) {
  for (bool is_input : {true, false}) {
    const char* key = is_input ? "inputs" : "outputs";
    auto n = required(sig, key, "a list of tensors");
    if (!n) return n.error();
    auto arr = array_at(*n, key);
    if (!arr) return arr.error();
    if ((*arr)->empty()) return fail(*n, std::string("'") + key + "' must not be empty");
    KF_RETURN_IF_ERROR(at_most(*n, (*arr)->size(), kMaxTensors, key));
    for (const toml::node& e : **arr) {
      auto t = tensor(&e, is_input, task.dtype);
      if (!t) return t.error();
      (is_input ? task.inputs : task.outputs).push_back(*t);
    }
  }
  return ok_status();
}

Status Loader::check_names(const Formula& f, const toml::node* at,
                           const std::set<std::string>& known) const {
  for (const auto& n : f.names())
    if (!known.count(n))
      return fail(at, "formula '" + f.text() + "' uses '" + n +
                          "', which is not a dim, derived size or scalar");
  return ok_status();
}

Status Loader::load_cost(const toml::table& root, Task& task,
                         const std::set<std::string>& known) const {
  auto cost_node = required(root, "cost", "a [cost] table with 'flops'");
  if (!cost_node) return cost_node.error();
  auto cost = table_at(*cost_node, "cost");
  if (!cost) return cost.error();
  KF_RETURN_IF_ERROR(known_keys(**cost, {"flops", "bytes"}, "[cost]"));
  auto fl = required(**cost, "flops", "a formula such as \"2 * M * N * K\"");
  if (!fl) return fl.error();
  auto flops = formula_at(*fl, "flops");
  if (!flops) return flops.error();
  KF_RETURN_IF_ERROR(check_names(*flops, *fl, known));
  task.flops = *flops;
  if (const toml::node* by = (*cost)->get("bytes")) {
    auto bytes = formula_at(by, "bytes");
    if (!bytes) return bytes.error();
    KF_RETURN_IF_ERROR(check_names(*bytes, by, known));
    task.bytes = *bytes;
  }
  return ok_status();
}

Status Loader::load_tolerance(const toml::table& root, Task& task) const {
  auto tol_node =
      required(root, "tolerance",
               "a [tolerance] table, e.g. f32 = { rel_l2 = 1e-5, atol = 1e-5, rtol = 1e-4 }");
  if (!tol_node) return tol_node.error();
  auto tol = table_at(*tol_node, "tolerance");
  if (!tol) return tol.error();
  for (const auto& [k, v] : **tol) {
    auto t = parse_dtype(k.str());
    if (!t || !is_floating(*t))
      return fail(&v, "tolerance key '" + excerpt(k.str()) + "' must be f32, f64 or bf16");
    auto tt = table_at(&v, std::string(k.str()));
    if (!tt) return tt.error();
    Tolerance tl;
    KF_RETURN_IF_ERROR(known_keys(**tt, {"rel_l2", "atol", "rtol"}, "a tolerance"));
    for (auto [key, dst] : {std::pair{"rel_l2", &tl.rel_l2}, std::pair{"atol", &tl.atol},
                            std::pair{"rtol", &tl.rtol}}) {
      auto n = required(**tt, key, "a non-negative number");
      if (!n) return n.error();
      auto x = number_at(*n, key);
      if (!x) return x.error();
      if (*x < 0 || *x >= 1) return fail(*n, std::string("'") + key + "' must be in [0, 1)");
      *dst = *x;
    }
    task.tolerance[*t] = tl;
  }
  if (!task.tolerance.count(task.dtype))
    return fail(*tol_node,
                "no tolerance for the task's dtype " + std::string(dtype_name(task.dtype)));
  return ok_status();
}

Status Loader::load_shapes(const toml::table& root, Task& task) const {
  auto sh_node = required(root, "shapes", "a [shapes] table with 'bench' and 'tests'");
  if (!sh_node) return sh_node.error();
  auto shapes = table_at(*sh_node, "shapes");
  if (!shapes) return shapes.error();
  KF_RETURN_IF_ERROR(known_keys(**shapes, {"bench", "tests"}, "[shapes]"));
  auto bench = required(**shapes, "bench", "the timed shape, e.g. { M = 1024 }");
  if (!bench) return bench.error();
  auto bp = shape_point(*bench, task);
  if (!bp) return bp.error();
  task.bench = *bp;
  auto tests = required(**shapes, "tests", "a list of small test shapes");
  if (!tests) return tests.error();
  auto tarr = array_at(*tests, "tests");
  if (!tarr) return tarr.error();
  if ((*tarr)->empty()) return fail(*tests, "'tests' must not be empty");
  KF_RETURN_IF_ERROR(at_most(*tests, (*tarr)->size(), kMaxTestShapes, "test shapes"));
  for (const toml::node& e : **tarr) {
    auto p = shape_point(&e, task);
    if (!p) return p.error();
    task.tests.push_back(*p);
  }
  return tests_cover_edges(*tests, task);
}

// The TE spec and the line it starts on (a multi-line string that opens with `"""` and a
// newline starts on the next line).
Status Loader::load_te(const toml::table& root, const std::string& text, Task& task) const {
  if (const toml::node* te = root.get("te")) {
    auto t = table_at(te, "te");
    if (!t) return t.error();
    auto spec = req_string(**t, "spec");
    if (!spec) return spec.error();
    task.te_spec = *spec;
    const toml::node* sn = (*t)->get("spec");
    task.te_line = static_cast<int>(sn->source().begin.line);
    size_t pos = 0;
    for (int l = 1; l < task.te_line && pos != std::string::npos; ++l)
      pos = text.find('\n', pos) + 1;
    if (pos != std::string::npos) {
      std::string line = text.substr(pos, text.find('\n', pos) - pos);
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
        line.pop_back();
      if (line.size() >= 3 && line.compare(line.size() - 3, 3, "\"\"\"") == 0) ++task.te_line;
    }
  }
  return ok_status();
}

Status Loader::load_baseline(const toml::table& root, Task& task) const {
  if (const toml::node* bl = root.get("baseline")) {
    auto t = table_at(bl, "baseline");
    if (!t) return t.error();
    Baseline b;
    KF_RETURN_IF_ERROR(known_keys(**t, {"file", "name", "libs"}, "[baseline]"));
    auto file = req_string(**t, "file");
    if (!file) return file.error();
    b.file = *file;
    if (const toml::node* n = (*t)->get("name")) {
      auto s = string_at(n, "name");
      if (!s) return s.error();
      b.name = *s;
    }
    if (const toml::node* libs = (*t)->get("libs")) {
      auto arr = array_at(libs, "libs");
      if (!arr) return arr.error();
      for (const toml::node& e : **arr) {
        auto s = string_at(&e, "libs");
        if (!s) return s.error();
        b.libs.push_back(*s);
      }
    }
    task.baseline = b;
  }
  return ok_status();
}

}  // namespace task_detail

using task_detail::Loader;

Expected<Task> parse_task(const std::string& toml_text, const std::filesystem::path& path) {
  return Loader(path).load(toml_text);
}

Expected<Task> load_task(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::error(dir.string() + ": not a task directory");
  auto toml_path = dir / "task.toml";
  auto text = read_file(toml_path);
  if (!text) return text.error();
  auto task = parse_task(*text, toml_path);
  if (!task) return task;
  auto ref = read_file(dir / "reference.cpp");
  if (!ref)
    return Status::error((dir / "reference.cpp").string() +
                         ": missing (every task needs a reference)");
  task->reference_source = *ref;
  task->dir = dir;
  if (task->baseline && !std::filesystem::exists(dir / task->baseline->file))
    return Status::error((dir / task->baseline->file).string() +
                         ": the baseline file named in task.toml does not exist");
  return task;
}

}  // namespace kf
