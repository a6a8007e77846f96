#include "harness/shim.h"

#include <fmt/format.h>

namespace kf {

DType buffer_dtype(const Task& task, size_t tensor, ShimKind kind) {
  DType t = task.tensor(tensor).dtype;
  if (kind == ShimKind::oracle && is_floating(t)) return DType::f64;
  return t;
}

std::string candidate_signature(const Task& task) {
  std::string params;
  auto add = [&](const std::string& p) { params += (params.empty() ? "" : ", ") + p; };
  for (size_t i = 0; i < task.tensor_count(); ++i)
    add(fmt::format("{}{}* {}", i < task.inputs.size() ? "const " : "",
                    dtype_cpp(task.tensor(i).dtype), task.tensor(i).name));
  for (const auto& d : task.dims) add("int64_t " + d);
  for (const auto& s : task.scalars)
    add(fmt::format("{} {}", is_floating(s.dtype) ? scalar_cpp(task.dtype) : "int64_t", s.name));
  return fmt::format("void {}({})", task.function, params);
}

std::string entry_shim(const Task& task, ShimKind kind) {
  std::string args;
  auto sep = [&] { return args.empty() ? "" : ",\n      "; };
  for (size_t i = 0; i < task.tensor_count(); ++i) {
    const bool input = i < task.inputs.size();
    std::string type(dtype_cpp(buffer_dtype(task, i, kind)));
    args += fmt::format("{}static_cast<{}{}*>(kf_buf[{}])", sep(), input ? "const " : "", type, i);
  }
  for (size_t i = 0; i < task.dims.size(); ++i) args += fmt::format("{}kf_dims[{}]", sep(), i);
  for (size_t i = 0; i < task.scalars.size(); ++i) {
    DType t = task.scalars[i].dtype;
    std::string type(is_floating(t) ? (kind == ShimKind::oracle ? "double" : scalar_cpp(task.dtype))
                                    : "int64_t");
    args += fmt::format("{}static_cast<{}>(kf_scalars[{}])", sep(), type, i);
  }
  std::string callee = task.function;
  if (kind == ShimKind::oracle) callee += "<double>";
  if (kind == ShimKind::reference) callee += fmt::format("<{}>", dtype_cpp(task.dtype));
  return fmt::format(
      "// kforge entry shim (generated): maps the judge's buffers onto the task's signature.\n"
      "#include <cstdint>\n"
      "#include <kforge/kernel.h>\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) void kf_entry(\n"
      "    void* const* kf_buf, const int64_t* kf_dims, const double* kf_scalars) {{\n"
      "  (void)kf_dims;\n"
      "  (void)kf_scalars;\n"
      "  {}(\n      {});\n"
      "}}\n",
      callee, args);
}

}  // namespace kf
