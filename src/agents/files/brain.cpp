#include "agents/files/brain.h"

#include <fmt/format.h>

#include <algorithm>
#include <system_error>

#include "agents/judge.h"
#include "support/fs.h"
#include "support/text_scan.h"

namespace kf::agents::files {

namespace fs = std::filesystem;

Expected<std::vector<std::string>> list_sources(const fs::path& dir) {
  std::error_code ec;
  if (dir.empty())
    return Status::error("the files brain needs a folder of sources (--sources DIR)");
  if (!fs::is_directory(dir, ec))
    return Status::error(fmt::format("--sources {}: not a folder", excerpt(dir.string())));
  std::vector<std::string> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->path().extension() == ".cpp" && it->is_regular_file(ec))
      out.push_back(it->path().filename().string());
  if (ec)
    return Status::error(fmt::format("--sources {}: {}", excerpt(dir.string()), ec.message()));
  std::sort(out.begin(), out.end());
  return out;
}

Plan FilesPlanner::plan(const PlanInput& in) {
  (void)in;
  Plan p;
  auto files = list_sources(dir_);
  if (!files) {
    p.strategy = "stop";
    p.why = files.error().message();
    return p;
  }
  for (const std::string& f : *files) {
    if (!proposed_.insert(f).second) continue;
    p.text = f;
    p.why = fmt::format("the next source in {} not judged yet", excerpt(dir_.string()));
    return p;
  }
  p.strategy = "stop";
  p.why = fmt::format("every source in {} was judged", excerpt(dir_.string()));
  return p;
}

namespace {

Expected<CandidateMsg> candidate_from(const std::string& source, SourceKind kind,
                                      const std::string& origin, const WorkContext& in) {
  CandidateMsg c;
  c.source = source;
  c.kind = kind;
  c.origin = origin;
  c.parent = in.best ? in.best->key : "";
  c.threads = in.ctx.threads;
  c.key = candidate_key(c.source, in.compile);
  return c;
}

}  // namespace

Expected<CandidateMsg> FilesImplementer::first(const WorkContext& in) {
  if (!in.task) return Status::error("no task");
  return candidate_from(in.task->task.reference_source, SourceKind::imported, "reference", in);
}

Expected<CandidateMsg> FilesImplementer::implement(const Plan& plan, const WorkContext& in) {
  const std::string name = plan.strategy.empty() ? plan.text : plan.strategy + ".cpp";
  // Only a plain file name inside the folder: a plan is untrusted text.
  if (name.empty() || name.find('/') != std::string::npos || name.starts_with(".") ||
      !name.ends_with(".cpp"))
    return Status::error(fmt::format("no source in {} for the plan '{}'", excerpt(dir_.string()),
                                     excerpt(plan.id())));
  const fs::path path = dir_ / name;
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return Status::error(fmt::format("{} has no {}", excerpt(dir_.string()), excerpt(name)));
  if (fs::file_size(path, ec) > kMaxSourceBytes)
    return Status::error(
        fmt::format("{} is over {} bytes", excerpt(path.string()), kMaxSourceBytes));
  auto text = read_file(path);
  if (!text) return text.error();
  return candidate_from(*text, SourceKind::written, "files:" + name, in);
}

}  // namespace kf::agents::files
