// The task.toml reader behind load_task (task.h), shared by its files: task_loader.cpp (the
// sections, in order) and task_loader_tensors.cpp (tensors and their input distributions).
// Every error names the file, the line and column of the offending value (or of the enclosing
// table when a key is missing) and what was expected. Internal to the task module.
#pragma once

#include <toml++/toml.h>

#include <filesystem>
#include <set>
#include <string>

#include "support/text_scan.h"
#include "task/task.h"
#include "task/task_skeleton.h"

namespace kf::task_detail {

inline constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
inline constexpr size_t kMaxNames = 64;    // dims, scalars, derived sizes: each
inline constexpr size_t kMaxTensors = 64;  // inputs, outputs: each
inline constexpr size_t kMaxRank = 16;     // dims of one tensor
inline constexpr size_t kMaxTestShapes = 64;
inline constexpr size_t kMaxIdentifier = 128;  // the longest name

class Loader {
 public:
  explicit Loader(std::filesystem::path path) : path_(std::move(path)) {}

  Status fail(const toml::node* at, const std::string& what) const {
    std::string where = path_.string();
    if (at) {
      const auto& b = at->source().begin;
      where += ":" + std::to_string(b.line) + ":" + std::to_string(b.column);
    }
    // A skeleton's placeholder (task_skeleton.h) is refused like any wrong value, but says so.
    const bool placeholder = at && at->is_string() && at->as_string()->get() == kPlaceholder;
    return Status::error(where + ": " + what +
                         (placeholder ? " (\"TODO\" is a placeholder from kforge new: fill it in; "
                                        "kforge check lists every one left)"
                                      : ""));
  }

  // A required key of `tbl` (a table node), or an error at the table.
  Expected<const toml::node*> required(const toml::table& tbl, const std::string& key,
                                       const std::string& what) const {
    const toml::node* n = tbl.get(key);
    if (!n) return fail(&tbl, "missing key '" + key + "' (expected " + what + ")");
    return n;
  }

  // Refuses keys outside `allowed` (typos must not be silently ignored).
  Status known_keys(const toml::table& tbl, std::initializer_list<const char*> allowed,
                    const std::string& where) const {
    for (const auto& [k, v] : tbl) {
      bool ok = false;
      for (const char* a : allowed) ok |= k.str() == a;
      if (ok) continue;
      std::string list;
      for (const char* a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return fail(&v, "unknown key '" + excerpt(k.str()) + "' in " + where +
                          " (expected one of: " + list + ")");
    }
    return ok_status();
  }

  // Counts are bounded: loading and judging a task is linear in each and the product of some
  // (every test shape instantiates every tensor), and no real task comes close.
  Status at_most(const toml::node* n, size_t count, size_t limit, const std::string& what) const {
    if (count <= limit) return ok_status();
    return fail(n, fmt::format("at most {} {} (got {})", limit, what, count));
  }

  Expected<std::string> string_at(const toml::node* n, const std::string& key) const {
    if (!n->is_string()) return fail(n, "'" + excerpt(key) + "' must be a string");
    return n->as_string()->get();
  }

  Expected<std::string> req_string(const toml::table& tbl, const std::string& key) const {
    auto n = required(tbl, key, "a string");
    if (!n) return n.error();
    return string_at(*n, key);
  }

  // TOML allows inf and nan; no field of a task may be either (a NaN tolerance passes every
  // check, an infinite bound sizes nothing).
  Expected<double> number_at(const toml::node* n, const std::string& key) const {
    auto v = n->value<double>();
    if (!v) return fail(n, "'" + excerpt(key) + "' must be a number");
    if (!std::isfinite(*v)) return fail(n, "'" + excerpt(key) + "' must be a finite number");
    return *v;
  }

  // An integer scalar's value (a default or a shape's override) must be one its dtype holds.
  Status integer_scalar_value(const toml::node* n, const ScalarSpec& s, double v) const {
    if (is_floating(s.dtype)) return ok_status();
    const double limit = s.dtype == DType::i32 ? 2147483647.0 : kMaxExactInteger;
    if (std::trunc(v) != v || std::abs(v) > limit)
      return fail(n, "scalar '" + s.name + "' is " + std::string(dtype_name(s.dtype)) +
                         ": expected an integer within +-" + fmt::format("{:.0f}", limit));
    return ok_status();
  }

  Expected<const toml::table*> table_at(const toml::node* n, const std::string& key) const {
    if (!n->is_table()) return fail(n, "'" + excerpt(key) + "' must be a table");
    return n->as_table();
  }

  Expected<const toml::array*> array_at(const toml::node* n, const std::string& key) const {
    if (!n->is_array()) return fail(n, "'" + excerpt(key) + "' must be an array");
    return n->as_array();
  }

  Expected<Formula> formula_at(const toml::node* n, const std::string& key) const {
    std::string text;
    if (auto i = n->value<int64_t>(); i && n->is_integer()) {
      text = std::to_string(*i);
    } else if (n->is_string()) {
      text = n->as_string()->get();
    } else {
      return fail(
          n, "'" + excerpt(key) + "' must be a formula (a string such as \"M * K\") or an integer");
    }
    auto f = Formula::parse(text);
    if (!f)
      return fail(n,
                  "bad formula '" + excerpt(text) + "' in '" + key + "': " + f.error().message());
    return f;
  }

  Expected<DType> dtype_at(const toml::node* n, const std::string& key) const {
    auto s = string_at(n, key);
    if (!s) return s.error();
    auto t = parse_dtype(*s);
    if (!t)
      return fail(n, "unknown dtype '" + excerpt(*s) + "' (expected f32, f64, bf16, i32 or i64)");
    return *t;
  }

  Status check_identifier(const toml::node* n, const std::string& s, const std::string& what) {
    bool ok = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
    for (char c : s) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!ok) return fail(n, what + " '" + excerpt(s) + "' is not a C++ identifier");
    // Names are quoted in later messages (and in generated code): keep them bounded.
    if (s.size() > kMaxIdentifier)
      return fail(
          n, fmt::format("{} '{}' is longer than {} characters", what, excerpt(s), kMaxIdentifier));
    if (!names_.insert(s).second) return fail(n, "the name '" + s + "' is declared twice");
    return ok_status();
  }

  Expected<Distribution> distribution(const toml::node* n, DType dtype) const;

  Expected<TensorSpec> tensor(const toml::node* n, bool is_input, DType task_dtype);

  Expected<ShapePoint> shape_point(const toml::node* n, const Task& task) const {
    auto t = table_at(n, "shapes");
    if (!t) return t.error();
    ShapePoint p;
    for (const auto& [k, v] : **t) {
      std::string key(k.str());
      bool is_dim = std::find(task.dims.begin(), task.dims.end(), key) != task.dims.end();
      bool is_scalar = std::any_of(task.scalars.begin(), task.scalars.end(),
                                   [&](const ScalarSpec& s) { return s.name == key; });
      if (!is_dim && !is_scalar)
        return fail(&v, "'" + excerpt(key) + "' is neither a dim nor a scalar of the signature");
      if (is_dim) {
        const std::optional<int64_t> i = v.is_integer() ? v.value<int64_t>() : std::nullopt;
        if (!i || *i < 0 || static_cast<double>(*i) > kMaxExactInteger)
          return fail(&v, "dim '" + key + "' must be a non-negative integer (at most 2^53)");
      }
      auto x = number_at(&v, key);
      if (!x) return x.error();
      for (const ScalarSpec& s : task.scalars)
        if (s.name == key) KF_RETURN_IF_ERROR(integer_scalar_value(&v, s, *x));
      p[key] = *x;
    }
    for (const auto& d : task.dims)
      if (!p.count(d)) return fail(n, "shape does not give a value for dim '" + d + "'");
    auto inst = task.instantiate(p);
    if (!inst) return fail(n, inst.error().message());
    return p;
  }

  Status tests_cover_edges(const toml::node* at, const Task& task) const {
    bool has_one = false, has_odd = false;
    for (const auto& p : task.tests)
      for (const auto& d : task.dims) {
        int64_t v = static_cast<int64_t>(p.at(d));
        has_one |= v == 1;
        has_odd |= v >= 2 && v % 8 != 0;
      }
    if (!has_one) return fail(at, "tests must include a shape with some dim equal to 1");
    if (!has_odd)
      return fail(at, "tests must include a shape with a dim (>= 2) that is not a multiple of 8");
    return ok_status();
  }

  Expected<Task> load(const std::string& text);

 private:
  // The sections of task.toml, in the order they are read; `known` collects what formulas may
  // name.
  Status load_header(const toml::table& root, Task& task) const;
  Status load_signature(const toml::table& root, Task& task, std::set<std::string>& known);
  Status load_scalars(const toml::node* sc, Task& task);
  Status load_tensors(const toml::table& sig, Task& task);
  Status check_names(const Formula& f, const toml::node* at,
                     const std::set<std::string>& known) const;
  Status load_cost(const toml::table& root, Task& task, const std::set<std::string>& known) const;
  Status load_tolerance(const toml::table& root, Task& task) const;
  Status load_shapes(const toml::table& root, Task& task) const;
  Status load_te(const toml::table& root, const std::string& text, Task& task) const;
  Status load_baseline(const toml::table& root, Task& task) const;

  std::filesystem::path path_;
  std::set<std::string> names_;
};

}  // namespace kf::task_detail
