// Ctrl-C for the long-running modes. The first SIGINT or SIGTERM asks the run to stop: waits on
// child processes (compilers, the sandboxed candidate) end at once with the child killed, the
// measurement they were part of is discarded unrecorded, and the mode finishes the run as
// "interrupted" (summary and best kernel written, resumable). A second signal ends the process
// with the signal's default action; the store survives that as it survives kill -9.
//
//   install_interrupt_handler();          // once, by a command that runs a search or a loop
//   if (interrupted()) return Status::error(kInterrupted);
#pragma once

namespace kf {

inline constexpr const char* kInterrupted = "interrupted";

void install_interrupt_handler();
// Whether a stop was asked for (false until the first signal; stays true).
bool interrupted();
// What a mode says it stopped for: "interrupted (SIGINT)".
const char* interrupt_reason();
// Forgets a SIGINT and arms the handler again (`kforge chat`: Ctrl-C ends the command it
// interrupted, not the session). A SIGTERM is kept. Returns whether a SIGINT was forgotten.
bool clear_interrupt();
// A command's exit status: 128 + the signal when interrupted (the shell's convention), else
// `otherwise`.
int interrupted_exit_code(int otherwise);

}  // namespace kf
