#include "harness/shim.h"

#include <fmt/format.h>

namespace kf {

DType buffer_dtype(const Task& task, size_t tensor, ShimKind kind) {
  DType t = task.tensor(tensor).dtype;
  if (kind == ShimKind::oracle && is_floating(t)) return DType::f64;
  return t;
}

std::vector<std::string> shim_param_types(const Task& task, ShimKind kind) {
  std::vector<std::string> types;
  for (size_t i = 0; i < task.tensor_count(); ++i)
    types.push_back(fmt::format("{}{}*", i < task.inputs.size() ? "const " : "",
                                dtype_cpp(buffer_dtype(task, i, kind))));
  for (size_t i = 0; i < task.dims.size(); ++i) types.emplace_back("int64_t");
  for (const auto& s : task.scalars) {
    if (!is_floating(s.dtype))
      types.emplace_back("int64_t");
    else
      types.emplace_back(kind == ShimKind::oracle ? "double" : scalar_cpp(task.dtype));
  }
  return types;
}

std::string candidate_signature(const Task& task) {
  const std::vector<std::string> types = shim_param_types(task, ShimKind::candidate);
  std::vector<std::string> names;
  for (size_t i = 0; i < task.tensor_count(); ++i) names.push_back(task.tensor(i).name);
  for (const auto& d : task.dims) names.push_back(d);
  for (const auto& s : task.scalars) names.push_back(s.name);
  std::string params;
  for (size_t i = 0; i < types.size(); ++i)
    params += fmt::format("{}{} {}", i ? ", " : "", types[i], names[i]);
  return fmt::format("void {}({})", task.function, params);
}

namespace {

// "const float* kf_a0, ..., int64_t kf_a5" (named) or "const float*, ..., int64_t".
std::string param_list(const std::vector<std::string>& types, bool named) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i) {
    s += fmt::format("{}{}", i ? ", " : "", types[i]);
    if (named) s += fmt::format(" kf_a{}", i);
  }
  return s;
}

std::string entry_args(const Task& task, const std::vector<std::string>& types) {
  std::string args;
  size_t i = 0;
  auto add = [&](const std::string& a) { args += fmt::format("{}{}", i++ ? ",\n      " : "", a); };
  for (size_t t = 0; t < task.tensor_count(); ++t)
    add(fmt::format("static_cast<{}>(kf_buf[{}])", types[i], t));
  for (size_t d = 0; d < task.dims.size(); ++d) add(fmt::format("kf_dims[{}]", d));
  for (size_t s = 0; s < task.scalars.size(); ++s)
    add(fmt::format("static_cast<{}>(kf_scalars[{}])", types[i], s));
  return args;
}

}  // namespace

EntryShim entry_shim(const Task& task, ShimKind kind) {
  const std::vector<std::string> types = shim_param_types(task, kind);
  std::string callee = task.function;
  if (kind == ShimKind::oracle) callee += "<double>";
  if (kind == ShimKind::reference) callee += fmt::format("<{}>", dtype_cpp(task.dtype));
  std::string forward;
  for (size_t i = 0; i < types.size(); ++i) forward += fmt::format("{}kf_a{}", i ? ", " : "", i);

  // The bind text follows the candidate's: it includes nothing a macro of the candidate's could
  // rewrite unless it must (kforge/kernel.h for bf16, which the candidate has included already to
  // name the type), and spells the integer types with the compiler's predefined names.
  std::vector<std::string> bind_types;
  bool bf16 = false;
  for (const auto& t : types) {
    bf16 |= t.find("kf::bf16") != std::string::npos;
    std::string b = t;
    for (auto [from, to] : {std::pair{"int64_t", "__INT64_TYPE__"}, {"int32_t", "__INT32_TYPE__"}})
      if (size_t p = b.find(from); p != std::string::npos)
        b.replace(p, std::string(from).size(), to);
    bind_types.push_back(b);
  }

  EntryShim shim;
  shim.function = task.function;
  shim.signature = kind == ShimKind::candidate
                       ? candidate_signature(task)
                       : fmt::format("void {}({})", callee, param_list(types, false));
  shim.bind = fmt::format(
      "// kforge bind (generated): the task's function at its exact parameter types.\n"
      "{5}"
      "void {0}({1}) {{\n"
      "  void (*const kf_fn)({2}) = &{3};\n"
      "  kf_fn({4});\n"
      "}}\n",
      kBindName, param_list(bind_types, true), param_list(bind_types, false), callee, forward,
      bf16 ? "#include <kforge/kernel.h>\n" : "");
  shim.entry = fmt::format(
      "// kforge entry shim (generated): maps the judge's buffers onto the task's signature.\n"
      "// Compiled as its own translation unit: nothing in the solution's source reaches it.\n"
      "#include <cstdint>\n"
      "#include <kforge/kernel.h>\n"
      "void {0}({1});\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) void kf_entry(\n"
      "    void* const* kf_buf, const int64_t* kf_dims, const double* kf_scalars) {{\n"
      "  (void)kf_dims;\n"
      "  (void)kf_scalars;\n"
      "  {0}(\n      {2});\n"
      "}}\n",
      kBindName, param_list(types, false), entry_args(task, types));
  return shim;
}

}  // namespace kf
