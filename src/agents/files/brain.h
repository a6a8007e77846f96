// The files brain: candidates written outside kforge, handed in as a folder of C++ sources (each
// one a translation unit with the task's signature, as `kforge eval` takes). It writes source and
// needs no TE spec, so it optimizes any task: with its own planner it proposes each file once, in
// name order; under the built-in planner its implementer answers a plan for strategy S with the
// file S.cpp (and refuses a plan it has no file for).
//
//   kforge optimize TASK --brain files --sources my_kernels/
//   kforge optimize TASK --brain planner=builtin,implementer=files --sources by_strategy/
//
// The run's first candidate is the task's reference, imported as it is. Its debugger, tester and
// autotuner are the built-in brain's (the autotuner leaves written source as it is).
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "agents/roles.h"

namespace kf::agents::files {

// The largest source file read (a folder is untrusted input).
inline constexpr size_t kMaxSourceBytes = size_t{1} << 20;

// The .cpp files of `dir`, sorted by name. Fails when `dir` is not a readable folder.
Expected<std::vector<std::string>> list_sources(const std::filesystem::path& dir);

class FilesPlanner : public Planner {
 public:
  explicit FilesPlanner(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // The next file not proposed yet (its name is the plan's text); "stop" when none is left.
  Plan plan(const PlanInput& in) override;

 private:
  std::filesystem::path dir_;
  std::set<std::string> proposed_;
};

class FilesImplementer : public Implementer {
 public:
  explicit FilesImplementer(std::filesystem::path dir) : dir_(std::move(dir)) {}
  // The task's reference source, imported.
  Expected<CandidateMsg> first(const WorkContext& in) override;
  // The file the plan's text names, or STRATEGY.cpp for a catalog strategy.
  Expected<CandidateMsg> implement(const Plan& plan, const WorkContext& in) override;

 private:
  std::filesystem::path dir_;
};

}  // namespace kf::agents::files
