// A task's identity: a hash of the bytes of every file in the task folder that defines it —
// task.toml, reference.cpp and the baseline's source file when task.toml declares one. Every
// evaluation key includes it (store/store.h evaluation_key), so a stored measurement is read back
// only for the task exactly as it was measured.
//
//   Expected<IdentifiedTask> t = load_identified_task("bench/jaxbench/08_gemm");
//   std::string ekey = evaluation_key(candidate, t->task.name + ":" + t->identity.hash, m, 1);
//
// The identity is taken by construction, from the files, never field by field: a field added to
// the format later (a shape set, a distribution, a cost term) is covered without anyone
// remembering to add it here. What task.toml says about the baseline (its libraries, its name)
// is in task.toml's bytes; the baseline's code is its file's bytes. The price is that an edit
// that cannot change a result (a comment, whitespace, key order in task.toml) also gives a new
// identity, and the next run measures again. Files the task does not name (README.md, notes)
// are not part of it. The folder's location is not part of it either: a copy of a task folder
// has the identity of the original.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "support/status.h"
#include "task/task.h"

namespace kf {

struct TaskIdentity {
  std::string hash;                // 32 hex digits
  std::vector<std::string> files;  // the files hashed, as task.toml names them, in hash order
};

// The identity of `task` from its folder's files as they are on disk now (task.dir). Fails,
// naming the file, when one cannot be read.
Expected<TaskIdentity> task_identity(const Task& task);

struct IdentifiedTask {
  Task task;
  TaskIdentity identity;
};

// load_task(dir) and the identity of the files it loaded: the defining files are read before and
// after loading, and the load is repeated (a few times at most) when task.toml or reference.cpp
// changed in between, so the identity is always that of the text the task was parsed from.
// Fails as load_task does, or when the folder keeps changing.
Expected<IdentifiedTask> load_identified_task(const std::filesystem::path& dir);

}  // namespace kf
