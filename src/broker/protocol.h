// The broker's wire format: the Redis keys, an evaluation job, a worker's result, a task folder
// as one value, and the judge's options as JSON. Everything read from Redis is untrusted: a
// parser here is bounded, never throws, and fails naming the field.
//
// Keys (CLASS: a machine fingerprint, the hardware class; SCOPE: the coordinator's run id):
//   kforge:jobs:CLASS      stream, consumer group "workers": the jobs for machines of CLASS
//   kforge:dead:CLASS      stream: jobs a worker could not read, kept for a person to inspect
//   kforge:task:HASH       string: a task folder's defining files, written once (SET NX)
//   kforge:worker:NAME     string with a TTL, refreshed by the worker's heartbeat: who it is
//   kforge:queued:SCOPE    set: the job ids the coordinator published (a job is published once)
//   kforge:results:SCOPE   hash: job id -> result, the first result only (HSETNX)
//   kforge:done:SCOPE      stream: one entry per result, what the coordinator blocks on
//
// Job states: queued (in the stream, no consumer) -> pending (delivered to a worker, which keeps
// its idle time near 0 while it works) -> done (result in the hash, then XACK). A pending job
// whose idle time passes the reclaim timeout belongs to a worker that stopped answering: another
// worker claims it (XAUTOCLAIM) and judges it again; past kMaxDeliveries it is recorded failed.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/evaluator.h"
#include "harness/run_result.h"
#include "support/status.h"
#include "task/task_identity.h"

namespace kf::broker {

inline constexpr const char* kGroup = "workers";
inline constexpr int kMaxDeliveries = 3;  // a job whose workers all died this often has failed
inline constexpr size_t kMaxSourceBytes = size_t{1} << 20;
inline constexpr size_t kMaxJobBytes = size_t{4} << 20;
inline constexpr size_t kMaxTaskFiles = 16;
inline constexpr size_t kMaxTaskFileBytes = size_t{4} << 20;
// A run's keys (queued, results, done) outlive its last job by a week: long enough to resume it.
inline constexpr int kRunKeysTtlS = 7 * 24 * 3600;

std::string jobs_key(const std::string& hw_class);
std::string dead_key(const std::string& hw_class);
std::string task_key(const std::string& task_hash);
std::string worker_key(const std::string& name);
std::string queued_key(const std::string& scope);
std::string results_key(const std::string& scope);
std::string done_key(const std::string& scope);

struct Job {
  std::string id;        // hex digits: the hash of everything below
  std::string scope;     // the coordinator's run: where the result goes
  std::string hw_class;  // the machine fingerprint the job must be judged on
  std::string task_hash;
  std::string source;
  EvalOptions options;  // what eval_options_to_json carries, and the origin (not in the id)

  nlohmann::json to_json() const;
  // Fails naming the first missing, mistyped or out-of-bounds field.
  static Expected<Job> from_json(const nlohmann::json& j);
  // The id of a job with these contents (options as JSON): the same job has the same id.
  static std::string make_id(const std::string& scope, const std::string& hw_class,
                             const std::string& task_hash, const std::string& source,
                             const nlohmann::json& options);
};

struct JobResult {
  std::string job, worker, fingerprint;
  std::string error;  // the worker's environment failed (no result): why
  RunResult result;   // when error is empty

  nlohmann::json to_json() const;
  static Expected<JobResult> from_json(const nlohmann::json& j);
};

// The judge's options a job carries. Not carried: the parsed program, the machine's ceilings
// and the callbacks (the worker has its own), libraries to link (trusted baselines only).
nlohmann::json eval_options_to_json(const EvalOptions& o);
// Fails when a field is mistyped or outside what a worker accepts (threads past 256, a timeout
// past an hour, a memory limit past 1 TiB, a compiler other than g++ or clang++, libraries).
Expected<EvalOptions> eval_options_from_json(const nlohmann::json& j);

// A task folder's defining files (TaskIdentity::files), by their names in the folder.
using TaskBundle = std::map<std::string, std::string>;
Expected<TaskBundle> bundle_task(const std::filesystem::path& dir, const TaskIdentity& identity);
nlohmann::json bundle_to_json(const TaskBundle& b);
// Fails on names that leave the folder (absolute, "..", empty) or past the size limits.
Expected<TaskBundle> bundle_from_json(const nlohmann::json& j);
// Writes the bundle into `dir` (created) and loads it; fails when its identity is not `hash`.
Expected<std::filesystem::path> unpack_task(const TaskBundle& b, const std::filesystem::path& dir,
                                            const std::string& hash);

}  // namespace kf::broker
