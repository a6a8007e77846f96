#include "task/task.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "support/hash.h"

namespace kf {

const Tolerance& Task::tolerance_for(DType t) const {
  auto it = tolerance.find(t);
  KF_CHECK(it != tolerance.end()) << "no tolerance for " << dtype_name(t);
  return it->second;
}

namespace {

constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53

std::string gib(size_t bytes) {
  return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

// The element count of extents `ext` and its size in bytes, or an error when either overflows
// size_t. An extent of 0 makes the count 0 whatever the others are.
Expected<std::pair<size_t, size_t>> checked_size(const std::vector<int64_t>& ext, DType t) {
  for (int64_t e : ext)
    if (e == 0) return std::pair<size_t, size_t>{0, 0};
  size_t n = 1, bytes = 0;
  for (int64_t e : ext)
    if (__builtin_mul_overflow(n, static_cast<size_t>(e), &n))
      return Status::error("its element count overflows 64 bits");
  if (__builtin_mul_overflow(n, dtype_size(t), &bytes))
    return Status::error("its size in bytes overflows 64 bits");
  return std::pair<size_t, size_t>{n, bytes};
}

}  // namespace

size_t shape_memory_limit() {
  if (const char* env = std::getenv("KFORGE_SHAPE_MEMORY_LIMIT")) {
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0' && v > 0) return static_cast<size_t>(v);
  }
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return size_t{4} << 30;
  return static_cast<size_t>(pages) / 4 * static_cast<size_t>(page);
}

Expected<ShapeInstance> Task::instantiate(const ShapePoint& p) const {
  ShapeInstance s;
  for (const auto& d : dims) {
    auto it = p.find(d);
    if (it == p.end()) return Status::error("no value for dim '" + d + "'");
    const double v = it->second;
    if (!(v >= 0 && v <= kMaxExactInteger) || std::trunc(v) != v)
      return Status::error("dim '" + d + "' must be an integer in [0, 2^53], got " +
                           fmt::format("{}", v));
    s.dims.push_back(static_cast<int64_t>(v));
    s.env[d] = v;
  }
  for (const auto& sc : scalars) {
    auto it = p.find(sc.name);
    double v = it == p.end() ? sc.default_value : it->second;
    if (!std::isfinite(v)) return Status::error("scalar '" + sc.name + "' is not finite");
    s.scalars.push_back(v);
    s.env[sc.name] = v;
  }
  for (size_t i = 0; i < dims.size(); ++i)
    s.text += fmt::format("{}{}={}", i ? " " : "", dims[i], s.dims[i]);
  for (size_t i = 0; i < scalars.size(); ++i)
    s.text += fmt::format(" {}={}", scalars[i].name, s.scalars[i]);
  for (const auto& [name, f] : derived) {
    auto v = f.eval_int(s.env);
    if (!v) return Status::error("derived size '" + name + "': " + v.error().message());
    s.env[name] = static_cast<double>(*v);
  }
  double compulsory = 0;
  for (size_t i = 0; i < tensor_count(); ++i) {
    const TensorSpec& t = tensor(i);
    std::vector<int64_t> ext;
    for (const auto& f : t.shape) {
      auto v = f.eval_int(s.env);
      if (!v) return Status::error("shape of '" + t.name + "': " + v.error().message());
      if (*v < 0)
        return Status::error("shape of '" + t.name + "': '" + f.text() + "' is negative (" +
                             std::to_string(*v) + ")");
      ext.push_back(*v);
    }
    auto size = checked_size(ext, t.dtype);
    if (!size) return Status::error("shape of '" + t.name + "': " + size.error().message());
    if (__builtin_add_overflow(s.buffer_bytes, size->second, &s.buffer_bytes))
      return Status::error("shape " + s.text + ": the buffers' total size overflows 64 bits");
    s.extents.push_back(ext);
    s.elements.push_back(size->first);
    compulsory += static_cast<double>(size->second);
  }
  if (const size_t limit = shape_memory_limit(); s.buffer_bytes > limit)
    return Status::error("shape " + s.text + " needs " + gib(s.buffer_bytes) +
                         " for one set of its inputs and outputs, more than the limit of " +
                         gib(limit) +
                         " (a quarter of this machine's memory, or $KFORGE_SHAPE_MEMORY_LIMIT)");
  auto fl = flops.eval(s.env);
  if (!fl) return Status::error("flops: " + fl.error().message());
  if (*fl < 0) return Status::error("flops: '" + flops.text() + "' is negative");
  s.flops = *fl;
  if (bytes) {
    auto by = bytes->eval(s.env);
    if (!by) return Status::error("bytes: " + by.error().message());
    if (*by < 0) return Status::error("bytes: '" + bytes->text() + "' is negative");
    s.bytes = *by;
  } else {
    s.bytes = compulsory;
  }
  return s;
}

std::string Task::content_hash() const {
  Hasher h;
  h.add(name).add(dtype_name(dtype)).add(function).add(reference_source).add(te_spec);
  for (const auto& d : dims) h.add(d);
  for (size_t i = 0; i < tensor_count(); ++i) {
    const TensorSpec& t = tensor(i);
    h.add(t.name).add(dtype_name(t.dtype));
    for (const auto& f : t.shape) h.add(f.text());
  }
  for (const auto& s : scalars) h.add(s.name).add(fmt::format("{}", s.default_value));
  for (const auto& [t, tol] : tolerance)
    h.add(dtype_name(t)).add(fmt::format("{} {} {}", tol.rel_l2, tol.atol, tol.rtol));
  return h.hex();
}

}  // namespace kf
