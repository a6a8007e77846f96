#include "modes/optimize_resume.h"

namespace kf {

Expected<ResumePoint> resume_point(Store& store, const std::string& run_id,
                                   const std::string& task_hash, double now_epoch_s) {
  auto run = store.get_run(run_id);
  if (!run) return run.error();
  auto a = store.next_attempt_seq(run_id);
  if (!a) return a.error();
  auto m = store.next_message_seq(run_id);
  if (!m) return m.error();
  auto attempts = store.attempts(run_id);
  if (!attempts) return attempts.error();
  ResumePoint p;
  p.stored_attempts = *a - 1;
  p.stored_messages = *m - 1;
  p.measured_for = run->options.value("task_identity", std::string());
  p.started_epoch_s = run->options.value("started_epoch_s", now_epoch_s);
  for (const AttemptRecord& r : *attempts)
    if (r.kind == "task_changed" && r.detail.is_object()) p.marker = r;
  if (p.marker) {
    p.measured_for = p.marker->detail.value("task_identity", std::string());
    p.started_epoch_s = p.marker->detail.value("started_epoch_s", p.started_epoch_s);
    p.attempt_seq = p.marker->seq;
    p.message_seq = p.marker->detail.value("message_seq", 0);
  }
  if (p.measured_for == task_hash) return p;
  p.task_changed = true;
  p.attempt_seq = p.stored_attempts;
  p.message_seq = p.stored_messages;
  p.started_epoch_s = now_epoch_s;
  return p;
}

nlohmann::json task_changed_detail(const ResumePoint& p, const std::string& task_hash) {
  return {{"task_identity", task_hash},
          {"previous_task_identity", p.measured_for},
          {"message_seq", p.message_seq},
          {"started_epoch_s", p.started_epoch_s}};
}

}  // namespace kf
