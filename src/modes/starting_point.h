// `--from FILE`: a run's first candidate given by a person instead of made by the implementer.
// A `.sched` file is a schedule of the task's TE spec (docs/schedule.md), lowered for the run's
// target; any other file is C++ with the task's signature. The candidate is judged first, as the
// run's baseline, and is the best to beat. Brains that edit source (llm) start from it; the
// built-in brain's moves are recipes over the default schedule, so for it the given kernel is the
// bar its recipes must clear, not a base they extend.
//
//   auto from = StartingPoint::read("my_gemm.cpp");        // the text is kept: a resume needs it
//   o.from = *from;                                          // stored with the run's options
//   auto first = starting_candidate(o.from, work);           // origin "from:my_gemm.cpp"
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "agents/messages.h"
#include "agents/roles.h"
#include "support/status.h"

namespace kf {

struct StartingPoint {
  std::string name;     // the file's name: the candidate's origin is "from:NAME"
  std::string content;  // its text, stored with the run so that a resume starts from the same
  bool schedule = false;

  bool empty() const { return content.empty(); }
  nlohmann::json to_json() const;
  static StartingPoint from_json(const nlohmann::json& j);  // missing or mistyped: none
  // Reads a .sched or C++ file (at most 1 MiB of UTF-8 text).
  static Expected<StartingPoint> read(const std::filesystem::path& file);
  // The same checks on text given directly (an edit from the browser): `name` is its origin.
  static Expected<StartingPoint> from_text(const std::string& name, const std::string& text,
                                           bool schedule);
};

// The candidate of a starting point for the run's task, target and compiler (`in`). Fails when a
// schedule does not parse or apply to the task's spec, or the task has no spec for it.
Expected<agents::CandidateMsg> starting_candidate(const StartingPoint& from,
                                                  const agents::WorkContext& in);

}  // namespace kf
