// The TE module's front door: compile a task's `[te] spec` into a checked Program.
//
//   Expected<Program> p = compile_spec(task);   // parse + check
//   if (!p) print(p.error().message());         // "bench/.../task.toml:52:14: unknown tensor
//   'Q'..."
//
// The pieces, for tests and tools: parse() (parser.h) -> check() (sema.h) -> interpret()
// (interpreter.h, the float64 oracle). docs/te.md describes the language.
#pragma once

#include <string>

#include "support/status.h"
#include "task/task.h"
#include "te/ast.h"
#include "te/interpreter.h"
#include "te/parser.h"
#include "te/sema.h"

namespace kf::te {

// The file name used in messages: TASK_DIR/task.toml.
std::string spec_file(const Task& task);

// Parses and checks task.te_spec against the task's signature. Fails when the task has no spec.
Expected<Program> compile_spec(const Task& task);

}  // namespace kf::te
