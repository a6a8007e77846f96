// The registry of brains: one explicit list.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "agents/builtin/brain.h"
#include "agents/files/brain.h"
#include "agents/llm/brain.h"
#include "agents/roles.h"
#include "support/text_scan.h"

namespace kf::agents {

namespace {

// One entry per brain: what it is, and how it fills each role (from the run's brain options).
struct BrainEntry {
  const char* name;
  const char* summary;
  std::unique_ptr<Planner> (*planner)(const BrainOptions&);
  std::unique_ptr<Implementer> (*implementer)(const BrainOptions&);
  std::unique_ptr<Debugger> (*debugger)(const BrainOptions&);
  std::unique_ptr<Tester> (*tester)(const BrainOptions&);
  std::unique_ptr<Profiler> (*profiler)(const BrainOptions&);
  std::unique_ptr<Autotuner> (*autotuner)(const BrainOptions&);
  // Checks the options the brain needs (nullptr: none).
  Status (*check)(const BrainOptions&) = nullptr;
};

template <class Role, class Impl>
std::unique_ptr<Role> make(const BrainOptions&) {
  return std::make_unique<Impl>();
}

template <class Role, class Impl>
std::unique_ptr<Role> make_with_sources(const BrainOptions& o) {
  return std::make_unique<Impl>(o.sources);
}

// The LLM brain's roles share the run's session (resolved and probed by check_llm first).
template <class Role, class Impl>
std::unique_ptr<Role> make_with_session(const BrainOptions& o) {
  auto s = llm_brain::session_for(o.llm);
  KF_CHECK(s.has_value()) << "check_llm resolves the session first";
  return std::make_unique<Impl>(*s);
}

Status check_llm(const BrainOptions& o) {
  auto s = llm_brain::session_for(o.llm);
  if (!s) return s.error();
  return (*s)->probe();
}

Status check_sources(const BrainOptions& o) {
  auto files = files::list_sources(o.sources);
  if (!files) return files.error();
  return {};
}

// The registry: the one list of brains. A new brain is one entry here.
const std::vector<BrainEntry>& registry() {
  using namespace builtin;
  static const std::vector<BrainEntry> entries = {
      {"builtin",
       "offline expert rules: plans catalog strategies and generates their schedules as C++ "
       "(needs a TE spec)",
       &make<Planner, BuiltinPlanner>, &make<Implementer, BuiltinImplementer>,
       &make<Debugger, BuiltinDebugger>, &make<Tester, BuiltinTester>,
       &make<Profiler, BuiltinProfiler>, &make<Autotuner, BuiltinAutotuner>},
      {"files",
       "C++ written outside kforge: judges each source of --sources DIR (or, under another "
       "planner, the file STRATEGY.cpp for each plan); needs no TE spec",
       &make_with_sources<Planner, files::FilesPlanner>,
       &make_with_sources<Implementer, files::FilesImplementer>, &make<Debugger, BuiltinDebugger>,
       &make<Tester, BuiltinTester>, &make<Profiler, BuiltinProfiler>,
       &make<Autotuner, BuiltinAutotuner>, &check_sources},
      {"llm",
       "any OpenAI-compatible model (--llm-config FILE, or OPENAI_BASE_URL): plans, writes C++ "
       "and repairs it from the judge's diagnostics; needs no TE spec",
       &make_with_session<Planner, llm_brain::LlmPlanner>,
       &make_with_session<Implementer, llm_brain::LlmImplementer>,
       &make_with_session<Debugger, llm_brain::LlmDebugger>,
       &make_with_session<Tester, llm_brain::LlmTester>, &make<Profiler, BuiltinProfiler>,
       &make<Autotuner, BuiltinAutotuner>, &check_llm},
  };
  return entries;
}

const BrainEntry* find_entry(const std::string& name) {
  for (const BrainEntry& e : registry())
    if (name == e.name) return &e;
  return nullptr;
}

std::string known_brains() {
  std::string out;
  for (const BrainEntry& e : registry()) out += (out.empty() ? "" : ", ") + std::string(e.name);
  return out;
}

}  // namespace

std::vector<std::string> brain_names() {
  std::vector<std::string> out;
  for (const BrainEntry& e : registry()) out.push_back(e.name);
  return out;
}

std::string brain_summaries() {
  std::string out;
  for (const BrainEntry& e : registry()) out += fmt::format("  {:<8} {}\n", e.name, e.summary);
  return out;
}

std::vector<std::string> role_names() {
  return {"planner", "implementer", "debugger", "tester", "profiler", "autotuner"};
}

Expected<std::map<std::string, std::string>> parse_team(const std::string& spec) {
  const auto unknown = [](const std::string& b) {
    return Status::error(
        fmt::format("unknown brain '{}': known brains are {}", excerpt(b), known_brains()));
  };
  std::map<std::string, std::string> team;
  if (spec.find('=') == std::string::npos) {  // one brain for every role
    if (!find_entry(spec)) return unknown(spec);
    for (const std::string& r : role_names()) team[r] = spec;
    return team;
  }
  std::string defaults = "builtin";
  size_t start = 0;
  while (start <= spec.size()) {
    size_t end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string part = spec.substr(start, end - start);
    start = end + 1;
    const size_t eq = part.find('=');
    if (eq == std::string::npos)
      return Status::error(fmt::format("'{}' in --brain is not ROLE=BRAIN (roles: {})",
                                       excerpt(part), fmt::join(role_names(), ", ")));
    const std::string role = part.substr(0, eq), brain = part.substr(eq + 1);
    if (!find_entry(brain)) return unknown(brain);
    const auto roles = role_names();
    if (role == "default") {
      defaults = brain;
    } else if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
      return Status::error(fmt::format("unknown role '{}': roles are {} (and default)",
                                       excerpt(role), fmt::join(role_names(), ", ")));
    } else if (!team.emplace(role, brain).second) {
      return Status::error(fmt::format("role '{}' is given twice in --brain", role));
    }
  }
  for (const std::string& r : role_names()) team.emplace(r, defaults);
  return team;
}

std::string team_name(const std::map<std::string, std::string>& team) {
  bool same = true;
  for (const auto& [role, brain] : team) same &= brain == team.begin()->second;
  if (same && !team.empty()) return team.begin()->second;
  std::string out;
  for (const std::string& r : role_names())
    if (auto it = team.find(r); it != team.end())
      out += (out.empty() ? "" : ",") + r + "=" + it->second;
  return out;
}

Expected<Brain> make_brain(const std::string& spec, const BrainOptions& options) {
  auto team = parse_team(spec);
  if (!team) return team.error();
  std::set<std::string> brains;
  for (const auto& [role, brain] : *team) brains.insert(brain);
  for (const std::string& name : brains)
    if (const BrainEntry* e = find_entry(name); e->check)
      KF_RETURN_IF_ERROR(e->check(options).with_context("brain " + name));
  Brain b;
  b.name = team_name(*team);
  b.roles = *team;
  b.planner = find_entry(team->at("planner"))->planner(options);
  b.implementer = find_entry(team->at("implementer"))->implementer(options);
  b.debugger = find_entry(team->at("debugger"))->debugger(options);
  b.tester = find_entry(team->at("tester"))->tester(options);
  b.profiler = find_entry(team->at("profiler"))->profiler(options);
  b.autotuner = find_entry(team->at("autotuner"))->autotuner(options);
  if (brains.count("llm")) {
    auto s = llm_brain::session_for(options.llm);
    KF_CHECK(s.has_value()) << "check_llm resolves the session first";
    b.halted = [session = *s] { return session->halted(); };
  }
  return b;
}

nlohmann::json StrategyFilter::to_json() const {
  return {{"only", only}, {"skip", skip}};
}

StrategyFilter StrategyFilter::from_json(const nlohmann::json& j) {
  StrategyFilter f;
  if (!j.is_object()) return f;
  for (const char* field : {"only", "skip"}) {
    if (!j.contains(field) || !j[field].is_array()) continue;
    for (const nlohmann::json& s : j[field])
      if (s.is_string()) (field[0] == 'o' ? f.only : f.skip).insert(s.get<std::string>());
  }
  return f;
}

std::vector<Plan> Planner::proposals(const PlanInput& in, size_t max) {
  PlanInput next = in;
  std::vector<Plan> out;
  while (out.size() < max) {
    Plan p = plan(next);
    if (p.strategy == "stop" || !next.tried.insert(p.id()).second) break;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<std::string> roles_needing_te_spec(const Brain& team) {
  std::vector<std::string> out;
  if (team.planner && team.planner->needs_te_spec())
    out.push_back("planner (" + team.roles.at("planner") + ")");
  if (team.implementer && team.implementer->needs_te_spec())
    out.push_back("implementer (" + team.roles.at("implementer") + ")");
  return out;
}

nlohmann::json Evidence::to_json() const {
  return {{"bound", bound},
          {"fraction", fraction},
          {"headroom", headroom},
          {"gflops", gflops},
          {"gbps", gbps},
          {"cpus_busy", cpus_busy},
          {"threads", threads},
          {"not_vectorized", not_vectorized},
          {"faults_in_hot_path", faults_in_hot_path},
          {"findings", findings},
          {"stage_shares", stage_shares}};
}

bool at_roofline(const Evidence& e, double stop_fraction) {
  return !e.bound.empty() && e.fraction >= stop_fraction && e.fraction <= 1.0;
}

Evidence evidence_from_result(const RunResult& r, int threads) {
  Evidence e;
  e.threads = threads;
  if (r.roofline) {
    e.bound = r.roofline->bound;
    e.fraction = r.roofline->fraction;
    e.headroom = r.roofline->fraction > 0 ? 1.0 / r.roofline->fraction : 1.0;
    e.gflops = r.roofline->gflops;
    e.gbps = r.roofline->gbps;
  }
  if (r.counters) {
    e.cpus_busy = r.counters->cpus_busy;
    e.faults_in_hot_path = r.counters->minor_faults_per_call > 16;
  }
  return e;
}

}  // namespace kf::agents
