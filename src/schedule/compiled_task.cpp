#include "schedule/compiled_task.h"

#include "te/compile.h"

namespace kf {

Expected<CompiledTask> compile_task(const std::filesystem::path& dir) {
  auto loaded = load_identified_task(dir);
  if (!loaded) return loaded.error();
  CompiledTask out;
  out.task = std::move(loaded->task);
  out.identity = loaded->identity;
  if (out.task.te_spec.empty()) return out;
  auto program = te::compile_spec(out.task);
  if (!program) return program.error();
  out.program = std::make_shared<const te::Program>(std::move(*program));
  out.base = sched::make_pipeline(*out.program, out.task);
  out.base->task = &out.task;
  return out;
}

}  // namespace kf
