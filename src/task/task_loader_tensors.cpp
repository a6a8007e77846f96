// Tensors of a task's signature and the distributions their inputs are drawn from.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "task/task_loader_internal.h"

namespace kf::task_detail {

Expected<Distribution> Loader::distribution(const toml::node* n, DType dtype) const {
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

Expected<TensorSpec> Loader::tensor(const toml::node* n, bool is_input, DType task_dtype) {
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
    if (is_input) return fail(n, "integer input '" + spec.name + "' needs a 'dist' (e.g. randint)");
  }
  return spec;
}

}  // namespace kf::task_detail
