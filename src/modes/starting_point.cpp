#include "modes/starting_point.h"

#include <fmt/format.h>

#include "agents/judge.h"
#include "lower/lower.h"
#include "schedule/trace.h"
#include "support/fs.h"
#include "support/json_text.h"

namespace kf {

namespace {
// A kernel or a schedule is a few kilobytes; a larger file is not what --from takes.
constexpr size_t kMaxBytes = 1 << 20;
}  // namespace

nlohmann::json StartingPoint::to_json() const {
  return {{"name", name}, {"content", content}, {"schedule", schedule}};
}

StartingPoint StartingPoint::from_json(const nlohmann::json& j) {
  StartingPoint s;
  if (!j.is_object()) return s;
  if (j.contains("name") && j["name"].is_string()) s.name = j["name"];
  if (j.contains("content") && j["content"].is_string()) s.content = j["content"];
  if (j.contains("schedule") && j["schedule"].is_boolean()) s.schedule = j["schedule"];
  return s;
}

Expected<StartingPoint> StartingPoint::read(const std::filesystem::path& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return Status::error(fmt::format("{}: {}", file.string(), ec.message()));
  if (size > kMaxBytes)
    return Status::error(fmt::format("{}: {} bytes; a kernel or a schedule has at most {}",
                                     file.string(), size, kMaxBytes));
  auto text = read_file(file);
  if (!text) return text.error();
  auto s = from_text(file.string(), *text, file.extension() == ".sched");
  if (s) s->name = file.filename().string();  // the origin names the file, not its folder
  return s;
}

Expected<StartingPoint> StartingPoint::from_text(const std::string& name, const std::string& text,
                                                 bool schedule) {
  if (text.size() > kMaxBytes)
    return Status::error(fmt::format("{}: {} bytes; a kernel or a schedule has at most {}", name,
                                     text.size(), kMaxBytes));
  if (text.empty()) return Status::error(name + ": the file is empty");
  if (!is_valid_utf8(text)) return Status::error(name + ": not UTF-8 text");
  return StartingPoint{.name = name, .content = text, .schedule = schedule};
}

Expected<agents::CandidateMsg> starting_candidate(const StartingPoint& from,
                                                  const agents::WorkContext& in) {
  agents::CandidateMsg c;
  c.origin = "from:" + from.name;
  c.threads = in.ctx.threads;
  if (!from.schedule) {
    c.kind = agents::SourceKind::written;
    c.source = from.content;
  } else {
    if (!in.task || !in.task->program)
      return Status::error(
          fmt::format("--from {}: a schedule needs the task's TE spec; {} has none", from.name,
                      in.task ? in.task->task.name : "the task"));
    auto s = sched::parse_schedule(from.content, from.name);
    if (!s) return s.error().with_context("--from " + from.name);
    LowerOptions lo;
    if (in.ctx.target) lo.target = in.ctx.target->codegen;
    auto src = generate_kernel(in.task->task, *in.task->program, *s, lo);
    if (!src) return src.error().with_context("--from " + from.name);
    c.kind = agents::SourceKind::generated;
    c.source = *src;
    c.generated = agents::Generation{.schedule = s->to_string()};
  }
  c.key = agents::candidate_key(c.source, in.compile);
  return c;
}

}  // namespace kf
