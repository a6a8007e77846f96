// `kforge chat [TASK] [--run RUN] [options]`: a person steering a run's search graph in the
// terminal (chat/session.h). Commands are read from stdin: with line editing, history and
// completion on a terminal, as plain lines from a pipe (each echoed after "> ", so a scripted
// session reads as a transcript). Answers go to stdout (with --json, one kforge-chat/1 document
// per command), measurement progress and errors to stderr. --llm-config, --max-tokens and
// --max-cost give a team with an LLM role its session, stored with the run. Exit status 0 when the
// session ended with `quit` or the end of input, 2 when it could not start (no task, no such chat
// run, the first candidate failed).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_chat_command(CLI::App& app);

}  // namespace kf
