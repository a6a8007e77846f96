// Fuzz targets for kforge's parsers of untrusted text: the task loader (task.toml), the TE
// parser and checker, the cost/size formula parser, and the schedule parser (with lowering).
//
//   fuzz::Context ctx = fuzz::load_context(source_dir);     // seed tasks and their programs
//   std::vector<fuzz::Input> seeds = fuzz::load_seeds(fuzz::Target::formula, source_dir, ctx);
//   fuzz::Rng rng(42);
//   fuzz::Input in = fuzz::mutate(seeds[0], seeds, rng);
//   fuzz::run_input(in, ctx);   // returns on every input; a throw, abort or hang is a bug
//
// The rule every target checks: whatever the text, the code under test answers with a value or
// an error Status, in bounded time and memory. An exception that escapes, a KF_CHECK that fires,
// a signal or an input that takes seconds is a finding. The driver (fuzz_main.cpp) runs seeded
// mutation loops over these targets in CI; the inputs it found are kept under
// tests/fuzz/regressions/<target>/ and replayed by fuzz_regressions_test.
//
// Input text of the te and schedule targets starts with a line "# task: NAME" that names the
// seed task (a folder name under bench/jaxbench, examples/tasks or tests/golden/tasks) whose
// signature the spec is checked against or whose program the schedule is applied to; without a
// known name the first seed task is used. The line is a comment in both languages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "task/task.h"
#include "te/ast.h"

namespace kf::fuzz {

enum class Target { task, te, formula, schedule };
inline constexpr Target kTargets[] = {Target::task, Target::te, Target::formula, Target::schedule};
std::string target_name(Target t);
bool parse_target(const std::string& name, Target* out);

struct Input {
  Target target = Target::formula;
  std::string text;
};

struct SeedTask {
  Task task;
  te::Program program;  // empty when the task has no spec
  bool has_program = false;
};

struct Context {
  std::map<std::string, SeedTask> tasks;  // by folder name
  std::string first;                      // the default task for te/schedule inputs
  // te: also run the checked program in the f64 interpreter (the judge's oracle) at the task's
  // first test shape. Its work is unbounded (a spec chooses its ranges), so this is for runs in
  // fork mode, where an alarm ends a long input; CI leaves it off.
  bool interpret = false;
};

// Loads every seed task of the source tree (bench/jaxbench/*, examples/tasks/*,
// tests/golden/tasks/*) that loads and compiles.
Context load_context(const std::filesystem::path& source_dir);

// The seed inputs of a target: task.toml texts, TE specs, the formulas of every seed task, and
// examples/schedules/*.sched.
std::vector<Input> load_seeds(Target t, const std::filesystem::path& source_dir,
                              const Context& ctx);

// A small deterministic generator (splitmix64), independent of kforge's own.
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next();
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }

 private:
  uint64_t s_;
};

// A mutation of `in`: byte edits, dictionary tokens, repeated and nested chunks (the long and
// deep inputs parsers fail on), number replacements and splices from `corpus` (same target).
Input mutate(const Input& in, const std::vector<Input>& corpus, Rng& rng);

// Runs one input through its target. Returns whether the text was accepted by the first parser
// (for corpus growth); anything but returning is a bug in kforge.
bool run_input(const Input& in, const Context& ctx);

// Regression files: tests/fuzz/regressions/<target>/<name>. `name` is derived from the text.
std::string regression_name(const Input& in);

}  // namespace kf::fuzz
