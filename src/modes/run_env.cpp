#include "modes/run_env.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "broker/broker_judge.h"
#include "support/interrupt.h"

namespace kf {

Expected<std::unique_ptr<RunEnv>> RunEnv::make(const RunEnvOptions& o) {
  std::unique_ptr<RunEnv> env(new RunEnv(o));
  auto task = compile_task(o.task_dir);
  if (!task) return task.error();
  env->compiled = std::move(*task);
  env->task_hash = env->compiled.identity.hash;
  auto brain = agents::make_brain(o.brain, o.brain_options);
  if (!brain) return brain.error();
  env->brain = std::move(*brain);
  if (!env->compiled.has_te_spec())
    if (auto roles = agents::roles_needing_te_spec(env->brain); !roles.empty())
      return Status::error(fmt::format(
          "{} has no TE spec, and the {} of this team generate kernels from one: give those "
          "roles a brain that writes source (brains:\n{})",
          env->compiled.task.name, fmt::join(roles, " and "), agents::brain_summaries()));
  auto backend = backend_named(o.backend);
  if (!backend) return backend.error();
  env->backend = *backend;
  env->machine = describe_machine(o.cxx);
  if (o.simulate.empty() && !o.broker.url.empty()) {
    KF_RETURN_IF_ERROR(env->open_broker());
  } else if (o.simulate.empty()) {
    auto m = env->backend->probe({.cxx = o.cxx});
    if (!m) return m.error().with_context("machine probe");
    env->machine = *m;
    KF_RETURN_IF_ERROR(env->backend->supports(env->machine)
                           .with_context(fmt::format("backend {}", env->backend->name)));
    env->judge_ = &env->harness_;
    env->machine_id = env->machine.fingerprint;
  } else {
    auto rj = agents::RecordedJudge::open(o.simulate);
    if (!rj) return rj.error();
    env->recorded_ = std::move(*rj);
    env->recorded_->set_latency(o.sim_latency_s);
    env->judge_ = env->recorded_.get();
    env->machine_id = "simulated:" + env->machine.fingerprint;
  }
  auto target = env->backend->target(o.target, env->machine);
  if (!target) return target.error();
  env->target = *target;
  if (!o.record.empty()) {
    env->recording_ = std::make_unique<agents::RecordingJudge>(*env->judge_, o.record);
    env->judge_ = env->recording_.get();
  }
  // Every evaluation key holds the hash of the task folder's files (task/task_identity.h): a
  // measurement of the task before an edit of any of its fields is never read back after it.
  env->task_identity = env->task_hash;
  if (o.remeasure) env->task_identity += ":run:" + o.run_id;  // this run's own measurements
  return env;
}

Status RunEnv::open_broker() {
  auto url = broker::RedisUrl::parse(options_.broker.url);
  if (!url) return url.error();
  auto j = broker::BrokerJudge::open({.url = *url,
                                      .scope = options_.run_id,
                                      .hw_class = options_.broker.hardware,
                                      .local_fingerprint = machine.fingerprint,
                                      .task_dir = compiled.task.dir,
                                      .identity = compiled.identity,
                                      .wait_for_worker_s = options_.broker.wait_s,
                                      .progress = options_.progress});
  if (!j) return j.error();
  // The workers' machine, not this one: kernels are generated and keys are made for it.
  machine = (*j)->machine();
  KF_RETURN_IF_ERROR(
      backend->supports(machine).with_context(fmt::format("backend {}", backend->name)));
  machine_id = machine.fingerprint;
  judge_ = j->get();
  broker_ = std::move(*j);
  return {};
}

nlohmann::json BrokerArgs::to_json() const {
  std::string stored = url;
  if (auto u = broker::RedisUrl::parse(url)) stored = u->without_credentials();
  return {{"url", stored}, {"hardware", hardware}, {"wait_s", wait_s}};
}

BrokerArgs BrokerArgs::from_json(const nlohmann::json& j) {
  BrokerArgs b;
  if (!j.is_object()) return b;
  if (j.contains("url") && j["url"].is_string()) b.url = j["url"].get<std::string>();
  if (j.contains("hardware") && j["hardware"].is_string())
    b.hardware = j["hardware"].get<std::string>();
  if (j.contains("wait_s") && j["wait_s"].is_number()) b.wait_s = j["wait_s"].get<double>();
  return b;
}

Status RunEnv::start_run(Store& store, const EventSinks& events, const std::string& run_id,
                         const RunStart& start) const {
  if (!start.resumed) {
    nlohmann::json opts = start.options;
    opts["started_epoch_s"] = start.started_epoch_s;
    opts["task_identity"] = task_hash;
    KF_RETURN_IF_ERROR(store.create_run({.id = run_id,
                                         .task_dir = options_.task_dir.string(),
                                         .task_name = compiled.task.name,
                                         .mode = start.mode,
                                         .brain = brain.name,
                                         .options = opts}));
  }
  events.emit(RunStarted{.run_id = run_id,
                         .task = compiled.task.name,
                         .mode = start.mode,
                         .brain = brain.name,
                         .target = target.name,
                         .threads = start.threads,
                         .budget_evals = start.budget_evals,
                         .budget_time_s = start.budget_time_s,
                         .resumed = start.resumed});
  return {};
}

RunLog::Config RunEnv::log_config(Store& store, const std::string& run_id, int budget_evals,
                                  const EventSinks* events) const {
  return {.store = &store,
          .judge = judge_,
          .task = &compiled.task,
          .run_id = run_id,
          .task_identity = task_identity,
          .machine_id = machine_id,
          .brain = brain.name,
          .budget_evals = budget_evals,
          .events = events};
}

agents::WorkContext RunEnv::work(const agents::CandidateMsg* best, int threads) const {
  agents::WorkContext in;
  in.task = &compiled;
  in.best = best;
  in.ctx = move_context(threads);
  in.compile.cxx = options_.cxx;
  in.compile.extra_flags = target.compile_flags;
  return in;
}

std::string end_state(const std::string& halted) {
  if (halted.empty()) return "finished";
  return interrupted() ? "interrupted" : "stopped";
}

Status halted_before_a_best(Store& store, const std::string& run_id, const std::string& mode,
                            const std::string& why) {
  KF_RETURN_IF_ERROR(store.update_run(run_id, end_state(why), "", {}));
  return Status::error(fmt::format(
      "{} before the first candidate was judged: `kforge {} --resume {}` starts it again", why,
      mode, run_id));
}

EvalSettings RunEnv::eval_settings(uint64_t seed, double min_time_s,
                                   double final_min_time_s) const {
  return {.seed = seed,
          .min_time_s = min_time_s,
          .final_min_time_s = final_min_time_s,
          .cxx = options_.cxx,
          .compile_flags = target.compile_flags,
          .backend = backend,
          .machine = &machine,
          .simulated = simulated()};
}

}  // namespace kf
