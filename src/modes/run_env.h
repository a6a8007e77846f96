// What every mode that judges candidates for a run sets up first, once: the compiled task, the
// team of brains, the backend and the machine it probed, the target, the judge (the sandboxed
// harness, or a recording replayed for `--simulate`, wrapped by a recorder for `--record`) and
// the identity that evaluation keys are made of. optimize (modes/optimize_loop.h) and search
// (search/engine.h) both start from it, so a run's judge, keys and work context mean the same
// in each.
//
//   auto env = RunEnv::make({.task_dir = dir, .brain = "builtin", .run_id = id});
//   if (!env) return env.error();
//   RunLog log({.judge = &(*env)->judge(), .task_identity = (*env)->task_identity, ...});
//   EvalOptions e = eval_options_for((*env)->eval_settings(seed, 0.3, 1.0), (*env)->compiled, ...);
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "agents/judge.h"
#include "agents/roles.h"
#include "harness/backend.h"
#include "harness/machine.h"
#include "harness/target.h"
#include "modes/broker_args.h"
#include "modes/eval_settings.h"
#include "modes/events.h"
#include "modes/run_log.h"
#include "schedule/compiled_task.h"
#include "store/store.h"

namespace kf {

// Wall-clock seconds since the epoch: what runs store as their start and budget time against.
inline double now_epoch_s() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct RunEnvOptions {
  std::filesystem::path task_dir;
  std::string brain = "builtin";  // a team spec (agents/roles.h parse_team)
  agents::BrainOptions brain_options;
  std::string backend = "cpu";
  std::string target;  // "" : the backend's default for the machine
  std::string cxx = "g++";
  std::string simulate;  // a recording to replay instead of judging
  double sim_latency_s = 0;
  std::string record;  // a recording to append every judged result to
  BrokerArgs broker;
  std::function<void(const std::string&)> progress;  // the broker's lines (waiting for workers)
  bool remeasure = false;             // keys of this run's own measurements: nothing read back
  agents::StrategyFilter strategies;  // what the built-in planner may propose
  agents::KnobPins pins;              // knob values a person fixed
  std::string run_id;
};

// What a mode stores about a run when it starts it, and announces.
struct RunStart {
  std::string mode;        // "optimize", "search"
  nlohmann::json options;  // the mode's options as JSON (resume reads them back)
  int threads = 1;
  int budget_evals = 0;
  double budget_time_s = 0;
  bool resumed = false;
  double started_epoch_s = 0;
};

class RunEnv {
 public:
  // Fails when the task does not load, a brain cannot be made (or needs a TE spec the task
  // lacks), the backend is unknown or unsupported here, the probe fails, or the target is not.
  static Expected<std::unique_ptr<RunEnv>> make(const RunEnvOptions& o);
  // The environment's options from a mode's (OptimizeOptions, SearchOptions: the same names; a
  // mode without a broker judges here).
  template <class ModeOptions>
  static RunEnvOptions options_of(const ModeOptions& o, const std::string& run_id) {
    RunEnvOptions e = {.task_dir = o.task_dir,
                       .brain = o.brain,
                       .brain_options = {.sources = o.sources, .llm = o.llm},
                       .backend = o.backend,
                       .target = o.target,
                       .cxx = o.cxx,
                       .simulate = o.simulate,
                       .sim_latency_s = o.sim_latency_s,
                       .record = o.record,
                       .progress = o.progress,
                       .remeasure = o.remeasure,
                       .strategies = o.strategies,
                       .pins = o.pins,
                       .run_id = run_id};
    if constexpr (requires { o.broker; }) e.broker = o.broker;
    return e;
  }

  // A new run's record in the store (with its options, start time and task identity), then the
  // RunStarted event, for a resumed run too.
  Status start_run(Store& store, const EventSinks& events, const std::string& run_id,
                   const RunStart& start) const;
  // The run log's configuration for a run in this environment.
  RunLog::Config log_config(Store& store, const std::string& run_id, int budget_evals,
                            const EventSinks* events) const;

  CompiledTask compiled;  // the task, loaded once
  agents::Brain brain;
  const Backend* backend = nullptr;  // what compiles, runs and profiles the candidates
  MachineInfo machine;
  Target target;           // what the kernels are generated and compiled for
  std::string machine_id;  // the machine's fingerprint ("simulated:..." when replaying)
  std::string task_hash;   // the task folder's identity
  // The evaluation keys' task part: the task hash (":run:ID" appended when remeasuring).
  std::string task_identity;

  agents::Judge& judge() const { return *judge_; }
  bool simulated() const { return !options_.simulate.empty(); }
  const agents::StrategyFilter& strategies() const { return options_.strategies; }
  const agents::KnobPins& pins() const { return options_.pins; }
  const std::string& cxx() const { return options_.cxx; }
  agents::MoveContext move_context(int threads) const {
    return {&machine, threads, &target, &options_.pins};
  }
  // The roles' work context: the task, the best so far, the machine and the compile options.
  agents::WorkContext work(const agents::CandidateMsg* best, int threads) const;
  EvalSettings eval_settings(uint64_t seed, double min_time_s, double final_min_time_s) const;

 private:
  explicit RunEnv(RunEnvOptions o) : options_(std::move(o)) {}
  // Judges on the broker's workers: their machine, their fingerprint in the keys.
  Status open_broker();
  RunEnvOptions options_;
  agents::HarnessJudge harness_;
  std::unique_ptr<agents::RecordedJudge> recorded_;
  std::unique_ptr<agents::RecordingJudge> recording_;
  std::unique_ptr<agents::Judge> broker_;
  agents::Judge* judge_ = nullptr;
};

// The state a run ends in: "finished", or when it halted (`halted` is why), "interrupted" for
// Ctrl-C or SIGTERM and "stopped" for its team; both can be resumed.
std::string end_state(const std::string& halted);
// A run halted before its first candidate was judged: left interrupted or stopped with nothing
// to report; the error says so and how to resume.
Status halted_before_a_best(Store& store, const std::string& run_id, const std::string& mode,
                            const std::string& why);

}  // namespace kf
