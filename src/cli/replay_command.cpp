#include "cli/replay_command.h"

#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "agents/llm/session.h"
#include "cli/cli_output.h"
#include "llm/replay_server.h"
#include "llm/transcript.h"
#include "modes/optimize.h"
#include "store/sqlite_store.h"

namespace kf {
namespace {

// `kforge replay --json`: whether the replay reached the same attempts, and the first that
// differs (docs/schemas/replay.schema.json).
constexpr const char* kReplaySchema = "kforge-replay/1";

struct ReplayArgs {
  std::string run, store, out;
  bool quiet = false, json = false;
};

// The recorded exchanges as a transcript: each answers the next request of its role, with the
// reply it got (a reply that did not read fails to read again). A call that got no answer is
// left out: the run stopped there, and its resume asked again (llm/exchange_record.h).
llm::Transcript transcript_of(const std::vector<LlmExchangeRecord>& records) {
  llm::Transcript t;
  std::set<std::string> models;
  for (const LlmExchangeRecord& r : records) {
    if (r.unanswered()) continue;
    llm::Exchange x;
    x.role = r.role;
    if (!r.response.empty()) x.body = r.response;
    t.exchanges.push_back(std::move(x));
    if (!r.model.empty() && models.insert(r.model).second) t.models.push_back(r.model);
  }
  return t;
}

// Settings that point every role at `base_url`, with the model each role was recorded with.
llm::LlmConfig config_for(const std::string& base_url,
                          const std::vector<LlmExchangeRecord>& records) {
  llm::LlmConfig c;
  c.defaults.base_url = base_url;
  c.defaults.model = records.front().model;
  c.defaults.max_retries = 0;
  c.defaults.timeout_s = 60;
  for (llm::LlmRole role :
       {llm::LlmRole::planner, llm::LlmRole::implementer, llm::LlmRole::debugger})
    for (const LlmExchangeRecord& r : records)
      if (r.role == llm::role_name(role)) {
        c.roles[role].model = r.model;
        break;
      }
  return c;
}

std::string attempt_line(const AttemptRecord& a) {
  return fmt::format("{} {} {} {}", a.kind, a.strategy, a.candidate_key.substr(0, 12), a.verdict);
}

// The first attempt where the two runs differ (kind, candidate or verdict), or nullopt.
struct Difference {
  size_t attempt = 0;              // 1-based
  std::string recorded, replayed;  // attempt_line, or "(none)" past a run's end
};

std::optional<Difference> first_difference(const std::vector<AttemptRecord>& recorded,
                                           const std::vector<AttemptRecord>& replayed) {
  for (size_t i = 0; i < std::max(recorded.size(), replayed.size()); ++i) {
    const bool both = i < recorded.size() && i < replayed.size();
    if (both && recorded[i].kind == replayed[i].kind &&
        recorded[i].candidate_key == replayed[i].candidate_key &&
        recorded[i].verdict == replayed[i].verdict)
      continue;
    return Difference{i + 1, i < recorded.size() ? attempt_line(recorded[i]) : "(none)",
                      i < replayed.size() ? attempt_line(replayed[i]) : "(none)"};
  }
  return std::nullopt;
}

int fail(std::string_view message) {
  print_error(message);
  return 2;
}

int run_replay(const ReplayArgs& a) {
  auto store =
      SqliteStore::open(a.store.empty() ? default_store_path() : std::filesystem::path(a.store));
  if (!store) return fail(store.error().message());
  auto run = (*store)->get_run(a.run);
  if (!run) return fail(run.error().message());
  if (run->mode != "optimize") return fail(fmt::format("run {} is a {} run", a.run, run->mode));
  auto records = (*store)->llm_exchanges(a.run);
  if (!records) return fail(records.error().message());
  if (records->empty()) return fail(fmt::format("run {} has no LLM exchanges to replay", a.run));
  auto options = OptimizeOptions::from_json(run->options);
  if (!options) return fail(options.error().message());
  auto server = llm::ReplayServer::start(transcript_of(*records));
  if (!server) return fail(server.error().message());
  OptimizeOptions o = *options;
  o.llm = std::make_shared<agents::llm_brain::Session>(
      agents::llm_brain::SessionOptions{.config = config_for((*server)->base_url(), *records)});
  o.llm_args = {};  // the replay server stands in for the recorded settings
  o.out_dir = a.out;
  o.spend_as = a.run;
  if (!a.quiet)  // on stderr when stdout holds the JSON document
    o.progress = [out = a.json ? stderr : stdout](const std::string& s) {
      fmt::print(out, "{}\n", s);
      std::fflush(out);
    };
  auto result = optimize(o, **store);
  (*server)->stop();
  if (!result) return fail(result.error().message());
  auto recorded = (*store)->attempts(a.run);
  auto replayed = (*store)->attempts(result->run_id);
  if (!recorded || !replayed)
    return fail((recorded ? replayed.error() : recorded.error()).message());
  const std::optional<Difference> d = first_difference(*recorded, *replayed);
  if (a.json) {
    nlohmann::json diff;  // null when the same
    if (d) diff = {{"attempt", d->attempt}, {"recorded", d->recorded}, {"replayed", d->replayed}};
    print_json(kReplaySchema, {{"run", a.run},
                               {"replay_run", result->run_id},
                               {"out_dir", result->out_dir.string()},
                               {"same", !d},
                               {"recorded_attempts", recorded->size()},
                               {"replayed_attempts", replayed->size()},
                               {"exchanges", records->size()},
                               {"difference", diff}});
    return d ? 1 : 0;
  }
  if (d) {
    fmt::print("attempt {} differs:\n  recorded  {}\n  replayed  {}\n", d->attempt, d->recorded,
               d->replayed);
    fmt::print("replay {} of run {}: DIFFERENT\n", result->run_id, a.run);
    return 1;
  }
  fmt::print("replay {} of run {}: the same {} attempts, from {} recorded exchanges\n",
             result->run_id, a.run, replayed->size(), records->size());
  return 0;
}

}  // namespace

void add_replay_command(CLI::App& app) {
  auto a = std::make_shared<ReplayArgs>();
  CLI::App* cmd = app.add_subcommand(
      "replay", "Run an LLM run again from its stored exchanges, without a model, and compare");
  cmd->add_option("run", a->run, "The run to replay")->required();
  cmd->add_option("--store", a->store, kStoreHelp);
  cmd->add_option(
      "--out", a->out,
      "Output folder of the replay (default $KFORGE_OUT/RUN, else ~/.local/share/kforge/runs/RUN)");
  cmd->add_flag("--quiet,-q", a->quiet, "No progress lines");
  cmd->add_flag("--json", a->json,
                fmt::format("Print the comparison as one JSON document (schema \"{}\", "
                            "docs/json.md); progress lines go to stderr",
                            kReplaySchema));
  cmd->callback([a] {
    const int rc = run_replay(*a);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace kf
