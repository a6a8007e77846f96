#include "cli/serve_command.h"

#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <thread>

#include "cli/cli_output.h"
#include "serve/web_server.h"
#include "support/fs.h"
#include "support/interrupt.h"

namespace kf {
namespace {

struct ServeArgs {
  serve::ServeOptions o;
  std::string store;
  bool quiet = false;
};

int run_serve(ServeArgs& a) {
  install_interrupt_handler();
  a.o.store = a.store.empty() ? default_store_path() : std::filesystem::path(a.store);
  if (!a.quiet) a.o.log = [](const std::string& line) { fmt::print(stderr, "{}\n", line); };
  auto server = serve::WebServer::start(a.o);
  if (!server) {
    print_error(server.error().message());
    return 2;
  }
  fmt::print("kforge serve: {} (store {}); Ctrl-C stops it\n", (*server)->url(),
             a.o.store.string());
  std::fflush(stdout);
  while (!interrupted()) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  (*server)->stop();
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "serve",
      "Open the run store in the browser: runs, live graphs, nodes' code and diffs, and the "
      "steering of chat runs (docs/serve.md)");
  cmd->add_option("--port,-p", a->o.port, "The port (0: any free one; default 8470)")
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", a->o.host,
                  "The address to listen on (default 127.0.0.1; another needs --token)");
  cmd->add_option("--token", a->o.token,
                  "The session token the page must send (default: a random one, printed in the "
                  "address)");
  cmd->add_option("--store", a->store, kStoreHelp);
  cmd->add_flag("-q,--quiet", a->quiet, "Do not log requests on stderr");
  cmd->callback([a] { throw CLI::RuntimeError(run_serve(*a)); });
}

}  // namespace kf
