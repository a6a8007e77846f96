#include "cli/llm_run.h"

#include <fmt/format.h>

#include <system_error>

#include "agents/roles.h"

namespace kf {

namespace llmb = agents::llm_brain;

Expected<std::unique_ptr<LlmRun>> LlmRun::make(const LlmRunArgs& args, Store& store,
                                               EventSink* next) {
  std::error_code ec;
  Expected<llm::LlmConfig> config = Status::error("no settings");
  if (!args.config.empty())
    config = llm::read_llm_config(args.config);
  else if (std::filesystem::is_regular_file("kforge.toml", ec))
    config = llm::read_llm_config("kforge.toml");
  else
    config = llm::llm_config_from_env();
  if (!config) return config.error();
  auto session = std::make_shared<llmb::Session>(llmb::SessionOptions{
      .config = *config, .budget = {.max_tokens = args.max_tokens, .max_cost = args.max_cost}});
  return std::unique_ptr<LlmRun>(new LlmRun(std::move(session), store, next));
}

bool team_uses_llm(const std::string& spec) {
  auto team = agents::parse_team(spec);
  if (!team) return false;
  for (const auto& [role, brain] : *team)
    if (brain == "llm") return true;
  return false;
}

LlmRunArgs LlmRun::to_store(const LlmRunArgs& given) {
  LlmRunArgs out = given;
  std::error_code ec;
  if (out.config.empty() && std::filesystem::is_regular_file("kforge.toml", ec))
    out.config = "kforge.toml";
  if (!out.config.empty()) out.config = std::filesystem::absolute(out.config, ec).string();
  return out;
}

void LlmRun::on(const Event& e) {
  if (const auto* started = std::get_if<RunStarted>(&e)) {
    const std::string run = started->run_id;
    std::vector<llm::ExchangeRecord> recorded;
    if (started->resumed) {
      auto stored = store_.llm_exchanges(run);
      if (!stored) status_ = stored.error();
      for (const LlmExchangeRecord& r : stored ? *stored : std::vector<LlmExchangeRecord>{})
        recorded.push_back(r);
    }
    Store& store = store_;
    session_->begin_run(std::move(recorded), [&store, run](const llm::ExchangeRecord& x) {
      auto seq = store.next_llm_exchange_seq(run);
      if (!seq) return seq.error();
      return store.put_llm_exchange(LlmExchangeRecord(run, *seq, x));
    });
  }
  if (next_) next_->on(e);
}

std::string LlmRun::usage_line() const {
  const llm::UsageTotals t = session_->meter().total();
  if (t.calls == 0) return "";
  return fmt::format(
      "llm: {} calls ({} answered from the run's record), {} tokens ({} prompt, {} "
      "completion), ${:.4f}{}\n",
      t.calls, session_->replayed(), t.tokens(), t.prompt_tokens, t.completion_tokens, t.cost,
      t.unpriced_calls > 0 ? fmt::format(" ({} calls unpriced)", t.unpriced_calls) : "");
}

void add_llm_options(CLI::App* cmd, LlmRunArgs& args) {
  cmd->add_option("--llm-config", args.config,
                  "The LLM brain's settings ([llm] table; default ./kforge.toml, else OPENAI_*)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--max-tokens", args.max_tokens, "Stop once the LLM calls used this many tokens")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50));
  cmd->add_option("--max-cost", args.max_cost, "Stop once the LLM calls cost this many US dollars")
      ->check(CLI::PositiveNumber);
}

}  // namespace kf
