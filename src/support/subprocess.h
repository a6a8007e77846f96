// Runs a trusted helper program (the compiler, the machine probe) and captures its output.
// Candidates never run through this: they run in the sandboxed worker (harness/sandbox.h).
//
//   ProcessOptions o{.argv = {"g++", "--version"}, .timeout_s = 10};
//   Expected<ProcessResult> r = run_process(o);
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "support/status.h"

namespace kf {

struct ProcessOptions {
  std::vector<std::string> argv;                             // argv[0] is looked up in PATH
  std::string cwd;                                           // empty: inherit
  std::vector<std::pair<std::string, std::string>> env_set;  // added to / replacing the environment
  double timeout_s = 60;           // wall clock; the process group is killed at the deadline
  size_t max_output = 1 << 20;     // bytes kept from each of stdout and stderr
  size_t address_space_limit = 0;  // RLIMIT_AS for the child in bytes; 0 = none
};

struct ProcessResult {
  int exit_code = -1;  // valid when signal == 0 and !timed_out
  int signal = 0;      // terminating signal, 0 if it exited
  bool timed_out = false;
  std::string out, err;
  double seconds = 0;
  bool ok() const { return !timed_out && signal == 0 && exit_code == 0; }
};

// Fails only if the process could not be started.
Expected<ProcessResult> run_process(const ProcessOptions& options);

// Runs argv and returns its stdout's first line, or "" if it fails.
std::string first_line_of(const std::vector<std::string>& argv);

// `diff -u` of two texts labelled `label_a` and `label_b` (at most `max_bytes` of it); "" when
// they are equal. Fails when diff cannot run.
Expected<std::string> unified_diff(const std::string& a, const std::string& b,
                                   const std::string& label_a, const std::string& label_b,
                                   size_t max_bytes = 64 * 1024);

}  // namespace kf
