// Semantic analysis: Ast + Task -> Program. Resolves every name, infers index ranges, types every
// expression, orders stages, and reports what is wrong as "FILE:LINE:COL: message".
//
//   Expected<Ast> ast = parse(task.te_spec, file, task.te_line);
//   Expected<Program> p = check(*ast, task, file);
//
// Rules (docs/te.md "Checks"): each statement defines one tensor, an output of the signature or a
// new intermediate, and reads only inputs and tensors defined by earlier statements (a
// recurrence also reads its own earlier elements). Outputs take their ranges from the declared
// shape; other index variables take theirs from the tensor dimensions they index (all uses must
// agree) or from an explicit `v in LO..HI`. Every intermediate must be used; every output
// assigned. Indices and range bounds are integers; conditions feed only select, &&, || and !.
#pragma once

#include <string>

#include "support/status.h"
#include "task/task.h"
#include "te/ast.h"

namespace kf::te {

Expected<Program> check(const Ast& ast, const Task& task, const std::string& file);

}  // namespace kf::te
