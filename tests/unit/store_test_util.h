// Records for store tests: small, fully populated, and distinct per argument.
#pragma once

#include <string>

#include "store/store.h"

namespace kf::store_test {

inline RunRecord run(const std::string& id, const std::string& created_at = "") {
  return RunRecord{.id = id,
                   .task_dir = "bench/jaxbench/01_matmul",
                   .task_name = "matmul",
                   .mode = "optimize",
                   .brain = "builtin",
                   .options = {{"budget", 20}, {"threads", 4}},
                   .state = "running",
                   .created_at = created_at,
                   .updated_at = created_at,
                   .best_candidate = "",
                   .summary = nlohmann::json::object()};
}

inline CandidateRecord candidate(const std::string& key, const std::string& source = "") {
  return CandidateRecord{
      .key = key,
      .source = source.empty() ? "void kernel() { /* " + key + " */ }\n" : source,
      .schedule = "split(i, 32)\nvectorize(i.inner)\n",
      .knobs = {{"tile", 32}},
      .provenance = {{"strategy", "tile"}, {"parent", ""}, {"brain", "builtin"}},
      .created_at = "2026-01-02T03:04:05.006Z"};
}

inline EvaluationRecord evaluation(const std::string& candidate_key, int threads = 4,
                                   double median_s = 1.5e-3) {
  return EvaluationRecord{
      .key = evaluation_key(candidate_key, "matmul M=64 N=64 K=64", "machine-fp", threads),
      .candidate_key = candidate_key,
      .task = "matmul",
      .machine = "machine-fp",
      .threads = threads,
      .verdict = "ok",
      .median_s = median_s,
      .min_s = median_s * 0.9,
      .result = {{"verdict", "ok"}, {"timing", {{"median_s", median_s}}}},
      .created_at = "2026-01-02T03:04:06.000Z"};
}

inline AttemptRecord attempt(const std::string& run_id, int seq, const std::string& candidate_key,
                             const std::string& evaluation_key) {
  return AttemptRecord{.run_id = run_id,
                       .seq = seq,
                       .kind = "tune",
                       .strategy = "tile",
                       .candidate_key = candidate_key,
                       .evaluation_key = evaluation_key,
                       .verdict = "ok",
                       .median_s = 1.5e-3,
                       .speedup = 2.25,
                       .detail = {{"note", "attempt " + std::to_string(seq)}},
                       .created_at = "2026-01-02T03:04:07.000Z"};
}

inline MessageRecord message(const std::string& run_id, int seq, const std::string& type) {
  return MessageRecord{.run_id = run_id,
                       .seq = seq,
                       .from_role = "planner",
                       .to_role = "implementer",
                       .type = type,
                       .body = {{"text", "message " + std::to_string(seq)}},
                       .created_at = "2026-01-02T03:04:08.000Z"};
}

}  // namespace kf::store_test
