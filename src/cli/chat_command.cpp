#include "cli/chat_command.h"

#include <fmt/format.h>

#include <memory>

#include "chat/line_reader.h"
#include "chat/session.h"
#include "cli/cli_output.h"
#include "cli/llm_run.h"
#include "cli/strategy_options.h"
#include "store/sqlite_store.h"
#include "support/interrupt.h"
#include "support/json_text.h"

namespace kf {
namespace {

// `chat --json`: one document per command on stdout, one line each
// (docs/schemas/chat.schema.json).
constexpr const char* kChatSchema = "kforge-chat/1";

struct ChatArgs {
  chat::ChatOptions o;
  std::string task_dir, run, store;
  bool json = false;
  LlmRunArgs llm;  // --llm-config, --max-tokens, --max-cost
};

int run_chat(ChatArgs& a) {
  install_interrupt_handler();
  if (a.task_dir.empty() && a.run.empty()) {
    print_error("kforge chat TASK (a task folder), or --run RUN to continue a chat run");
    return 2;
  }
  auto store =
      SqliteStore::open(a.store.empty() ? default_store_path() : std::filesystem::path(a.store));
  if (!store) {
    print_error(store.error().message());
    return 2;
  }
  if (!a.run.empty()) {  // a prefix of one run's id is enough
    auto run = find_run(**store, a.run);
    if (!run) {
      print_error(run.error().message());
      return 2;
    }
    a.o.run = run->id;
  }
  a.o.task_dir = a.task_dir;
  // The LLM brain's session when the team (of the run continued, too) has an LLM role; a
  // continued run's stored settings are used unless given again.
  std::unique_ptr<LlmRun> llm;
  std::string spec = a.o.brain;
  LlmRunArgs args = a.llm;
  if (!a.o.run.empty())
    if (auto run = (*store)->get_run(a.o.run); run && run->mode == "chat") {
      spec = run->brain;
      if (auto stored = chat::ChatOptions::from_json(run->options))
        args = a.llm.over(stored->llm_args);
    }
  if (team_uses_llm(spec)) {
    a.o.llm_args = LlmRun::to_store(args);
    auto made = LlmRun::make(args, **store, nullptr);
    if (!made) {
      print_error(made.error().message());
      return 2;
    }
    llm = std::move(*made);
    a.o.events = llm.get();
    a.o.llm = llm->session();
  }
  chat::LineReader in(chat::Session::command_names());
  a.o.editor_stdin = in.interactive();
  a.o.progress = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  auto session = chat::Session::open(a.o, **store);
  if (!session) {
    print_error(session.error().message());
    return 2;
  }
  chat::Session& s = **session;
  // Text for a person; with --json, one line per command for a program (the status first).
  auto reply = [&](const std::string& command, const Expected<std::string>& answer) {
    if (!a.json) {
      if (answer)
        fmt::print("{}", *answer);
      else
        print_error(answer.error().message());
    } else {
      nlohmann::json j = {{"schema", kChatSchema},  {"run", s.run_id()},
                          {"command", command},     {"ok", answer.has_value()},
                          {"current", s.current()}, {"nodes", s.graph().size()}};
      j[answer ? "answer" : "error"] = answer ? *answer : answer.error().message();
      fmt::print("{}\n", dump_json(j));
    }
    std::fflush(stdout);
  };
  reply("status", s.status() + "`plan` lists the planner's proposals, `help` every command\n");
  while (!s.quit_requested()) {
    auto line = in.read("kforge> ");
    if (!line) break;
    if (!in.interactive() && !a.json && !line->empty()) fmt::print("> {}\n", *line);
    if (line->find_first_not_of(" \t") == std::string::npos) continue;
    reply(*line, s.run(*line));
    // A Ctrl-C ends the command it interrupted, not the session; a SIGTERM ends the session.
    if (interrupted() && !clear_interrupt()) break;
  }
  if (llm) fmt::print(a.json ? stderr : stdout, "{}", llm->usage_line());
  if (Status st = s.close(); !st.ok()) {
    print_error(st.message());
    return 2;
  }
  return 0;
}

}  // namespace

void add_chat_command(CLI::App& app) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* cmd = app.add_subcommand(
      "chat",
      "Steer a run yourself, one command at a time: plan, apply, edit, eval, tune, search, "
      "export (docs/chat.md)");
  cmd->add_option("task", a->task_dir, "The task folder (not needed with --run)");
  cmd->add_option("--run,--resume", a->run,
                  "Continue this chat run (its id, or a prefix of one; see `kforge runs`)");
  cmd->add_option("--store", a->store, kStoreHelp);
  cmd->add_option("--threads,-t", a->o.threads, "Threads for the kernels")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--brain", a->o.brain, "A team spec, as for optimize (default builtin)");
  cmd->add_option("--sources", a->o.sources, "The files brain's folder of C++ candidates")
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--target", a->o.target, "native, avx512, avx2 or scalar")
      ->check(CLI::IsMember({"native", "avx512", "avx2", "scalar"}));
  cmd->add_option("--editor", a->o.editor,
                  "The command `edit` runs on a file (default $VISUAL, then $EDITOR, then vi)");
  cmd->add_option("--min-time", a->o.min_time_s, "Seconds of timing per candidate")
      ->check(CLI::Range(0.01, 60.0));
  cmd->add_option("--seed", a->o.seed, "Seed of the inputs and the search policies");
  add_steering_options(cmd, a->o.strategies, a->o.pins);
  add_from_option(cmd, a->o.from);
  add_llm_options(cmd, a->llm);
  cmd->add_flag("--json", a->json,
                fmt::format("Answer each command with one JSON document on its own line (schema "
                            "\"{}\", docs/json.md)",
                            kChatSchema));
  cmd->callback([a] { throw CLI::RuntimeError(run_chat(*a)); });
}

}  // namespace kf
