#include "agents/judge.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "harness/toolchain.h"
#include "support/hash.h"
#include "support/json_text.h"

namespace kf::agents {

std::string candidate_key(const std::string& source, const CompileOptions& compile) {
  std::string normalized;
  normalized.reserve(source.size());
  std::istringstream in(source);
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.pop_back();
    normalized += line;
    normalized += '\n';
  }
  Hasher h;
  h.add(normalized);
  for (const std::string& f : compile.extra_flags) h.add(f);
  h.add(toolchain_identity(compile.cxx));
  return h.hex();
}

Expected<RunResult> HarnessJudge::judge(const Task& task, const std::string& source,
                                        const EvalOptions& options) {
  return evaluate(task, source, options);
}

Expected<RunResult> RecordingJudge::judge(const Task& task, const std::string& source,
                                          const EvalOptions& options) {
  auto r = inner_.judge(task, source, options);
  if (!r) return r;
  std::ofstream out(path_, std::ios::app);
  if (!out) return Status::error("cannot append to the recording " + path_);
  nlohmann::json line = {{"candidate", candidate_key(source, options.compile)},
                         {"threads", options.threads},
                         {"result", r->to_json()}};
  if (!options.label.empty()) line["label"] = options.label;
  out << dump_json(line) << "\n";  // the result holds the candidate's text: maybe not UTF-8
  if (!out) return Status::error("cannot write the recording " + path_);
  return r;
}

Expected<std::unique_ptr<RecordedJudge>> RecordedJudge::open(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::error("cannot read the recording " + path);
  auto j = std::make_unique<RecordedJudge>();
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (line.empty()) continue;
    nlohmann::json x = nlohmann::json::parse(line, nullptr, false);
    if (x.is_discarded() || !x.is_object() || !x.contains("candidate") ||
        !x["candidate"].is_string() || !x.contains("result") ||
        (x.contains("threads") && !x["threads"].is_number_integer()) ||
        (x.contains("label") && !x["label"].is_string()))
      return Status::error(path + ":" + std::to_string(n) + ": expected a recorded result");
    auto r = RunResult::from_json(x["result"]);
    if (!r) return Status::error(path + ":" + std::to_string(n) + ": " + r.error().message());
    j->results_[{x["candidate"].get<std::string>(), x.value("threads", 1), x.value("label", "")}]
        .push_back(*r);
  }
  return j;
}

Expected<RunResult> RecordedJudge::judge(const Task& task, const std::string& source,
                                         const EvalOptions& options) {
  if (latency_s_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(latency_s_));
  const Key key{candidate_key(source, options.compile), options.threads, options.label};
  auto it = results_.find(key);
  if (it != results_.end()) {
    // A candidate measured several times under one label, in the order recorded; the last
    // one again once they are used up.
    size_t& next = next_[key];
    const RunResult& r = it->second[std::min(next, it->second.size() - 1)];
    ++next;
    return r;
  }
  RunResult r;
  r.verdict = Verdict::crash;
  r.task = task.name;
  r.threads = options.threads;
  r.message = "simulation: no recorded measurement for this candidate";
  return r;
}

}  // namespace kf::agents
