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

namespace kf {
namespace {

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
constexpr size_t kMaxNames = 64;                         // dims, scalars, derived sizes: each
constexpr size_t kMaxTensors = 64;                       // inputs, outputs: each
constexpr size_t kMaxRank = 16;                          // dims of one tensor
constexpr size_t kMaxTestShapes = 64;
constexpr size_t kMaxIdentifier = 128;  // the longest name

class Loader {
 public:
  explicit Loader(std::filesystem::path path) : path_(std::move(path)) {}

  Status fail(const toml::node* at, const std::string& what) const {
    std::string where = path_.string();
    if (at) {
      const auto& b = at->source().begin;
      where += ":" + std::to_string(b.line) + ":" + std::to_string(b.column);
    }
    return Status::error(where + ": " + what);
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

  Expected<Distribution> distribution(const toml::node* n, DType dtype) const {
    Distribution d;
    auto t = table_at(n, "dist");
    if (!t) return t.error();
    const toml::table& tbl = **t;
    auto kind = req_string(tbl, "kind");
    if (!kind) return kind.error();
    static const std::map<std::string, DistKind> kinds = {
        {"normal", DistKind::normal},       {"uniform", DistKind::uniform},
        {"positive", DistKind::positive},   {"randint", DistKind::randint},
        {"partition", DistKind::partition}, {"offsets", DistKind::offsets},
        {"constant", DistKind::constant}};
    auto it = kinds.find(*kind);
    if (it == kinds.end())
      return fail(tbl.get("kind"),
                  "unknown distribution '" + excerpt(*kind) +
                      "' (expected normal, uniform, positive, randint, partition, offsets or "
                      "constant)");
    d.kind = it->second;
    KF_RETURN_IF_ERROR(
        known_keys(tbl, {"kind", "mean", "std", "lo", "hi", "sorted", "total", "value"}, "dist"));
    auto num = [&](const char* key, double dflt) -> Expected<double> {
      const toml::node* v = tbl.get(key);
      return v ? number_at(v, key) : Expected<double>(dflt);
    };
    const bool integer_kind =
        d.kind == DistKind::randint || d.kind == DistKind::partition || d.kind == DistKind::offsets;
    if (integer_kind && is_floating(dtype))
      return fail(n, "distribution '" + excerpt(*kind) + "' needs an integer tensor (i32 or i64)");
    if (!integer_kind && d.kind != DistKind::constant && !is_floating(dtype))
      return fail(n, "an integer tensor needs randint, partition, offsets or constant");
    switch (d.kind) {
      case DistKind::normal: {
        auto m = num("mean", 0), s = num("std", 1);
        if (!m) return m.error();
        if (!s) return s.error();
        d.a = *m;
        d.b = *s;
        if (d.b <= 0) return fail(n, "normal: 'std' must be > 0");
        if (!std::isfinite(std::abs(d.a) + 40 * d.b))
          return fail(n, "normal: 'mean' and 'std' are too large to draw from");
        break;
      }
      case DistKind::uniform:
      case DistKind::positive: {
        bool pos = d.kind == DistKind::positive;
        auto lo = num("lo", pos ? 0.5 : -1), hi = num("hi", pos ? 1.5 : 1);
        if (!lo) return lo.error();
        if (!hi) return hi.error();
        d.a = *lo;
        d.b = *hi;
        if (!(d.a < d.b)) return fail(n, *kind + ": expected lo < hi");
        if (!std::isfinite(d.b - d.a)) return fail(n, *kind + ": 'hi - lo' is too large");
        if (pos && d.a <= 0) return fail(n, "positive: expected lo > 0");
        break;
      }
      case DistKind::randint: {
        auto lo = num("lo", 0);
        if (!lo) return lo.error();
        d.a = *lo;
        if (std::trunc(d.a) != d.a || std::abs(d.a) > kMaxExactInteger)
          return fail(tbl.get("lo"), "randint: 'lo' must be an integer within +-2^53");
        auto hi = required(tbl, "hi", "the exclusive upper bound, e.g. \"N\"");
        if (!hi) return hi.error();
        auto f = formula_at(*hi, "hi");
        if (!f) return f.error();
        d.bound = *f;
        if (const toml::node* s = tbl.get("sorted")) {
          if (!s->is_boolean()) return fail(s, "'sorted' must be true or false");
          d.sorted = s->as_boolean()->get();
        }
        break;
      }
      case DistKind::partition:
      case DistKind::offsets: {
        auto tot = required(tbl, "total", "the sum of the group sizes, e.g. \"M\"");
        if (!tot) return tot.error();
        auto f = formula_at(*tot, "total");
        if (!f) return f.error();
        d.bound = *f;
        break;
      }
      case DistKind::constant: {
        auto v = required(tbl, "value", "a number");
        if (!v) return v.error();
        auto x = number_at(*v, "value");
        if (!x) return x.error();
        d.a = *x;
        break;
      }
    }
    return d;
  }

  Expected<TensorSpec> tensor(const toml::node* n, bool is_input, DType task_dtype) {
    auto t = table_at(n, is_input ? "inputs" : "outputs");
    if (!t) return t.error();
    const toml::table& tbl = **t;
    TensorSpec spec;
    KF_RETURN_IF_ERROR(known_keys(tbl, {"name", "dtype", "shape", "dist"}, "a tensor"));
    auto name = req_string(tbl, "name");
    if (!name) return name.error();
    spec.name = *name;
    KF_RETURN_IF_ERROR(check_identifier(tbl.get("name"), spec.name, "tensor name"));
    auto dt = required(tbl, "dtype", "f32, f64, bf16, i32 or i64");
    if (!dt) return dt.error();
    auto dtype = dtype_at(*dt, "dtype");
    if (!dtype) return dtype.error();
    spec.dtype = *dtype;
    if (is_floating(spec.dtype) && spec.dtype != task_dtype)
      return fail(*dt, "floating tensor '" + spec.name + "' has dtype " +
                           std::string(dtype_name(spec.dtype)) + " but the task's dtype is " +
                           std::string(dtype_name(task_dtype)) +
                           " (all floating tensors share the task's dtype)");
    auto sh = required(tbl, "shape", "a list of size formulas, e.g. [\"M\", \"K\"]");
    if (!sh) return sh.error();
    auto arr = array_at(*sh, "shape");
    if (!arr) return arr.error();
    KF_RETURN_IF_ERROR(at_most(*sh, (*arr)->size(), kMaxRank, "dims in a tensor's shape"));
    for (const toml::node& e : **arr) {
      auto f = formula_at(&e, "shape");
      if (!f) return f.error();
      spec.shape.push_back(*f);
    }
    if (const toml::node* d = tbl.get("dist")) {
      if (!is_input) return fail(d, "outputs have no 'dist'");
      auto dist = distribution(d, spec.dtype);
      if (!dist) return dist.error();
      spec.dist = *dist;
    } else if (!is_floating(spec.dtype)) {
      if (is_input)
        return fail(n, "integer input '" + spec.name + "' needs a 'dist' (e.g. randint)");
    }
    return spec;
  }

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
  std::filesystem::path path_;
  std::set<std::string> names_;
};

Expected<Task> Loader::load(const std::string& text) {
  toml::table root;
  try {
    root = toml::parse(text, path_.string());
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return Status::error(path_.string() + ":" + std::to_string(b.line) + ":" +
                         std::to_string(b.column) +
                         ": TOML syntax error: " + std::string(e.description()));
  }
  KF_RETURN_IF_ERROR(known_keys(root,
                                {"name", "category", "description", "dtype", "signature", "shapes",
                                 "tolerance", "cost", "te", "baseline"},
                                "the task"));
  Task task;
  task.dir = path_.parent_path();
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

  // [signature]
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
  if (const toml::node* sc = (*sig)->get("scalars")) {
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
  }
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
  for (bool is_input : {true, false}) {
    const char* key = is_input ? "inputs" : "outputs";
    auto n = required(**sig, key, "a list of tensors");
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
  // Every formula may only name dims, derived sizes and scalars.
  std::set<std::string> known(task.dims.begin(), task.dims.end());
  for (const auto& s : task.scalars) known.insert(s.name);
  auto check_names = [&](const Formula& f, const toml::node* at) -> Status {
    for (const auto& n : f.names())
      if (!known.count(n))
        return fail(at, "formula '" + f.text() + "' uses '" + n +
                            "', which is not a dim, derived size or scalar");
    return ok_status();
  };
  for (const auto& [k, f] : task.derived) {
    KF_RETURN_IF_ERROR(check_names(f, (*sig)->get("derived")));
    known.insert(k);
  }
  for (size_t i = 0; i < task.tensor_count(); ++i)
    for (const auto& f : task.tensor(i).shape) KF_RETURN_IF_ERROR(check_names(f, *sig_node));

  // [cost]
  auto cost_node = required(root, "cost", "a [cost] table with 'flops'");
  if (!cost_node) return cost_node.error();
  auto cost = table_at(*cost_node, "cost");
  if (!cost) return cost.error();
  KF_RETURN_IF_ERROR(known_keys(**cost, {"flops", "bytes"}, "[cost]"));
  auto fl = required(**cost, "flops", "a formula such as \"2 * M * N * K\"");
  if (!fl) return fl.error();
  auto flops = formula_at(*fl, "flops");
  if (!flops) return flops.error();
  KF_RETURN_IF_ERROR(check_names(*flops, *fl));
  task.flops = *flops;
  if (const toml::node* by = (*cost)->get("bytes")) {
    auto bytes = formula_at(by, "bytes");
    if (!bytes) return bytes.error();
    KF_RETURN_IF_ERROR(check_names(*bytes, by));
    task.bytes = *bytes;
  }

  // [tolerance]
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

  // [shapes]
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
  KF_RETURN_IF_ERROR(tests_cover_edges(*tests, task));

  // [te], [baseline]
  if (const toml::node* te = root.get("te")) {
    auto t = table_at(te, "te");
    if (!t) return t.error();
    auto spec = req_string(**t, "spec");
    if (!spec) return spec.error();
    task.te_spec = *spec;
    // A multi-line string that opens with `"""` and a newline starts on the next line.
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
  return task;
}

}  // namespace

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
