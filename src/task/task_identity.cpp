#include "task/task_identity.h"

#include "support/fs.h"
#include "support/hash.h"

namespace kf {
namespace {

struct FolderFile {
  std::string name, bytes;
};

// The files that define a task, in hash order: task.toml, reference.cpp, then the baseline's
// source ("" for none).
std::vector<std::string> defining_files(const std::string& baseline_file) {
  std::vector<std::string> names = {"task.toml", "reference.cpp"};
  if (!baseline_file.empty()) names.push_back(baseline_file);
  return names;
}

Expected<std::vector<FolderFile>> read_files(const std::filesystem::path& dir,
                                             const std::vector<std::string>& names) {
  std::vector<FolderFile> out;
  for (const std::string& name : names) {
    auto bytes = read_file(dir / name);
    if (!bytes)
      return Status::error((dir / name).string() + ": cannot be read for the task's identity");
    out.push_back({name, std::move(*bytes)});
  }
  return out;
}

TaskIdentity identity_of(const std::vector<FolderFile>& files) {
  Hasher h;
  h.add("kforge-task-identity-v1");
  TaskIdentity id;
  for (const FolderFile& f : files) {
    // Each add is length-prefixed: a name and its bytes can never run into the next file's.
    h.add(f.name).add(f.bytes);
    id.files.push_back(f.name);
  }
  id.hash = h.hex();
  return id;
}

}  // namespace

Expected<TaskIdentity> task_identity(const Task& task) {
  auto files = read_files(task.dir, defining_files(task.baseline ? task.baseline->file : ""));
  if (!files) return files.error();
  return identity_of(*files);
}

Expected<IdentifiedTask> load_identified_task(const std::filesystem::path& dir) {
  // An editor saving the folder while it is loaded could otherwise pair the old text's task with
  // the new text's identity (or the reverse), and a stale result would be read back under it.
  constexpr int kTries = 3;
  for (int i = 0; i < kTries; ++i) {
    auto before = read_files(dir, defining_files(""));
    auto task = load_task(dir);
    if (!task) return task.error();
    if (!before) return before.error();
    auto after = read_files(dir, defining_files(task->baseline ? task->baseline->file : ""));
    if (!after) return after.error();
    if ((*after)[0].bytes != (*before)[0].bytes || (*after)[1].bytes != (*before)[1].bytes ||
        (*after)[1].bytes != task->reference_source)
      continue;
    TaskIdentity id = identity_of(*after);
    return IdentifiedTask{std::move(*task), std::move(id)};
  }
  return Status::error(dir.string() + ": the task's files kept changing while it was loaded");
}

}  // namespace kf
