// compile_spec: parse + check (see te.h).
#include "te/compile.h"

namespace kf::te {

std::string spec_file(const Task& task) {
  return (task.dir / "task.toml").string();
}

Expected<Program> compile_spec(const Task& task) {
  const std::string file = spec_file(task);
  if (task.te_spec.empty()) return Status::error(file + ": the task has no [te] spec");
  auto ast = parse(task.te_spec, file, task.te_line);
  if (!ast) return ast.error();
  return check(*ast, task, file);
}

}  // namespace kf::te
