// `kforge llm-serve`: an OpenAI-compatible HTTP server that answers from a transcript
// (llm/transcript.h), for tests, demos and reproducing a session without a model.
//
//   kforge llm-serve --transcript t.json              # 127.0.0.1, a free port
//   kforge llm-serve --transcript t.json --port 8080 --host 0.0.0.0
//
// The first line of stdout is the base URL to give a client ("http://127.0.0.1:PORT/v1");
// stderr gets one line per request (never a key). It serves until SIGINT or SIGTERM, then says
// how many exchanges were left and exits 0. A transcript that does not load or an address that
// cannot be bound prints "error: <why>" on stderr and exits 1. main.cpp registers it:
// add_llm_serve_command(app).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_llm_serve_command(CLI::App& app);

}  // namespace kf
