// Where a resumed optimize run picks up (optimize.h, "Design notes (resume)"), and whether the
// task changed since the run measured it.
//
//   auto p = resume_point(store, run_id, identity.hash, now);
//   if (p->task_changed) { say("the task changed ..."); record a task_changed attempt; }
//   replay the loop, skipping writes with seq <= p->stored_attempts / p->stored_messages
//
// A run's stored attempts were measured for the task as it was then: its options hold that
// task's identity (task/task_identity.h, "task_identity"), and an attempt of kind "task_changed"
// marks each later point where a resume found the folder edited (its detail: the new identity,
// the message sequence number and the time budget's start at that point). When the identity
// still matches, the replay starts after the last marker. When it does not, nothing stored is
// reused (every evaluation key differs), and the run starts over on the edited task after its
// stored attempts and messages, with a fresh time budget.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "store/store.h"
#include "support/status.h"

namespace kf {

struct ResumePoint {
  int stored_attempts = 0, stored_messages = 0;  // written before the interruption
  int attempt_seq = 0, message_seq = 0;          // the replay's last sequence numbers before it
  double started_epoch_s = 0;                    // the time budget counts from here
  std::string measured_for;   // the task identity the stored attempts measured ("" unknown)
  bool task_changed = false;  // measured_for is not the task's identity now
  std::optional<AttemptRecord> marker;  // the last task_changed attempt, if any
};

// Reads run `run_id` back from `store`. `task_hash` is the task's identity now; `now_epoch_s`
// starts the time budget of a run that starts over. Fails when the store does.
Expected<ResumePoint> resume_point(Store& store, const std::string& run_id,
                                   const std::string& task_hash, double now_epoch_s);

// The detail of the task_changed attempt that records `p`'s restart on the task `task_hash`.
nlohmann::json task_changed_detail(const ResumePoint& p, const std::string& task_hash);

}  // namespace kf
