// A task loaded once for a run: the task with its identity and, where it has a TE spec, the
// parsed and checked program and its default-scheduled pipeline. Modes load it at the start and
// pass it down: brains read the pipeline from here, kernel generation (generate_kernel) and the
// judge (EvalOptions::program) the program, and nobody parses the spec again.
//
//   Expected<CompiledTask> t = compile_task("bench/jaxbench/12_rmsnorm");
//   if (t->base) ...  // a TE spec: schedules can be generated for it
#pragma once

#include <filesystem>
#include <memory>
#include <optional>

#include "schedule/pipeline.h"
#include "support/status.h"
#include "task/task.h"
#include "task/task_identity.h"
#include "te/ast.h"

namespace kf {

// The base pipeline points at `task`: a copy or a move points the copy's pipeline at the copy's
// task.
struct CompiledTask {
  Task task;
  TaskIdentity identity;
  std::shared_ptr<const te::Program> program;  // null: the task has no TE spec
  std::optional<sched::Pipeline> base;         // nullopt: the task has no TE spec

  CompiledTask() = default;
  CompiledTask(const CompiledTask& o)
      : task(o.task), identity(o.identity), program(o.program), base(o.base) {
    repoint();
  }
  CompiledTask(CompiledTask&& o) noexcept
      : task(std::move(o.task)),
        identity(std::move(o.identity)),
        program(std::move(o.program)),
        base(std::move(o.base)) {
    repoint();
  }
  CompiledTask& operator=(CompiledTask o) noexcept {
    task = std::move(o.task);
    identity = std::move(o.identity);
    program = std::move(o.program);
    base = std::move(o.base);
    repoint();
    return *this;
  }

  bool has_te_spec() const { return base.has_value(); }

 private:
  void repoint() {
    if (base) base->task = &task;
  }
};

// Fails when the task cannot be loaded or its TE spec does not compile.
Expected<CompiledTask> compile_task(const std::filesystem::path& dir);

}  // namespace kf
