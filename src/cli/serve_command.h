// `kforge serve [--port P] [--host H] [--token T] [--store PATH]`: the run store in the browser
// (serve/web_server.h). Prints the page's address (with its session token) and serves until
// Ctrl-C or SIGTERM, then ends the browser's chat sessions as `quit` would. Exit status 0 after a
// clean stop, 2 when it cannot listen or the address needs a token.
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_serve_command(CLI::App& app);

}  // namespace kf
