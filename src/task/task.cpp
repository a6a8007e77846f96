#include "task/task.h"

#include <fmt/format.h>

#include "support/hash.h"

namespace kf {

const Tolerance& Task::tolerance_for(DType t) const {
  auto it = tolerance.find(t);
  KF_CHECK(it != tolerance.end()) << "no tolerance for " << dtype_name(t);
  return it->second;
}

Expected<ShapeInstance> Task::instantiate(const ShapePoint& p) const {
  ShapeInstance s;
  for (const auto& d : dims) {
    auto it = p.find(d);
    if (it == p.end()) return Status::error("no value for dim '" + d + "'");
    s.dims.push_back(static_cast<int64_t>(it->second));
    s.env[d] = it->second;
  }
  for (const auto& sc : scalars) {
    auto it = p.find(sc.name);
    double v = it == p.end() ? sc.default_value : it->second;
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
    size_t n = 1;
    for (const auto& f : t.shape) {
      auto v = f.eval_int(s.env);
      if (!v) return Status::error("shape of '" + t.name + "': " + v.error().message());
      if (*v < 0)
        return Status::error("shape of '" + t.name + "': '" + f.text() + "' is negative (" +
                             std::to_string(*v) + ")");
      ext.push_back(*v);
      n *= static_cast<size_t>(*v);
    }
    s.extents.push_back(ext);
    s.elements.push_back(n);
    compulsory += static_cast<double>(n * dtype_size(t.dtype));
  }
  auto fl = flops.eval(s.env);
  if (!fl) return Status::error("flops: " + fl.error().message());
  s.flops = *fl;
  if (bytes) {
    auto by = bytes->eval(s.env);
    if (!by) return Status::error("bytes: " + by.error().message());
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
