// `kforge replay RUN [--store PATH] [--out DIR] [-q]`: runs an LLM run again without a model.
// The run's stored exchanges (request and reply, verbatim) become a transcript served by the
// replay server on loopback; a new optimize run with the recorded run's options asks it instead
// of the model, and its attempts are compared with the recorded run's: the same candidates in the
// same order, or the first difference. Exit status 0 when they match, 1 when they differ, 2 on an
// error (no such run, no exchanges, a store that does not open).
#pragma once

#include <CLI/CLI.hpp>

namespace kf {

void add_replay_command(CLI::App& app);

}  // namespace kf
