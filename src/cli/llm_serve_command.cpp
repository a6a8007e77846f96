#include "cli/llm_serve_command.h"

#include <fmt/format.h>
#include <signal.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli/cli_output.h"
#include "llm/replay_server.h"

namespace kf {
namespace {

struct ServeArgs {
  std::string transcript;
  std::string host = "127.0.0.1";
  int port = 0;
};

int run_llm_serve(const ServeArgs& args) {
  auto transcript = llm::read_transcript(args.transcript);
  if (!transcript) {
    print_error(transcript.error().message());
    return 1;
  }
  // The server's threads inherit this mask, so SIGINT and SIGTERM reach only sigwait below.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const size_t exchanges = transcript->exchanges.size();
  auto server = llm::ReplayServer::start(
      std::move(*transcript),
      {.host = args.host, .port = args.port, .log = [](const std::string& line) {
         fmt::print(stderr, "{}\n", terminal_text(line));
       }});
  if (!server) {
    print_error(server.error().message());
    return 1;
  }
  fmt::print("{}\n", (*server)->base_url());
  std::fflush(stdout);
  fmt::print(stderr, "serving {} exchanges from {} until SIGINT or SIGTERM\n", exchanges,
             terminal_text(args.transcript));
  int signal = 0;
  sigwait(&stop_signals, &signal);
  (*server)->stop();
  fmt::print(stderr, "stopped by signal {}: {} requests received, {} exchanges left\n", signal,
             (*server)->received().size(), (*server)->exchanges_left());
  return 0;
}

}  // namespace

void add_llm_serve_command(CLI::App& app) {
  auto args = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "llm-serve", "Serve an OpenAI-compatible endpoint that answers from a transcript");
  cmd->add_option("--transcript", args->transcript, "the transcript (JSON, see docs/llm.md)")
      ->required();
  cmd->add_option("--port", args->port, "the port (default: any free one)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", args->host, "the address to listen on (default: 127.0.0.1 only)");
  cmd->callback([args] { throw CLI::RuntimeError(run_llm_serve(*args)); });
}

}  // namespace kf
