#include "cli/lower_command.h"

#include <fmt/format.h>

#include <memory>

#include "cli/cli_output.h"
#include "lower/lower.h"
#include "support/fs.h"

namespace kf {
namespace {

// `kforge lower --json`: the generated source with the schedule it was generated from
// (docs/schemas/lower.schema.json).
constexpr const char* kLowerSchema = "kforge-lower/1";

struct LowerArgs {
  std::string task_dir, schedule, out, target = "avx512";
  bool dump_ir = false, json = false;
};

// The schedule as data: its canonical text, its hash (part of a generated candidate's
// identity) and one entry per primitive, as parsed.
nlohmann::json schedule_json(const sched::Schedule& s, const std::string& file) {
  nlohmann::json steps = nlohmann::json::array();
  for (const sched::Primitive& p : s.steps)
    steps.push_back({{"primitive", sched::to_string(p.kind)}, {"args", p.args}, {"line", p.line}});
  return {{"file", file.empty() ? nlohmann::json() : nlohmann::json(file)},
          {"text", s.to_string()},
          {"hash", s.hash()},
          {"steps", steps}};
}

int run_lower(const LowerArgs& a) {
  auto task = load_task(a.task_dir);
  if (!task) {
    print_error(task.error().message());
    return 2;
  }
  sched::Schedule schedule;
  if (!a.schedule.empty()) {
    auto text = read_file(a.schedule);
    if (!text) {
      print_error(text.error().message());
      return 2;
    }
    auto s = sched::parse_schedule(*text, a.schedule);
    if (!s) {
      print_error(s.error().message());
      return 2;
    }
    schedule = *s;
  }
  LowerOptions o;
  o.target = a.target == "avx2"     ? CodegenTarget::avx2
             : a.target == "scalar" ? CodegenTarget::scalar
                                    : CodegenTarget::avx512;
  if (a.dump_ir)
    o.dump = [](const std::string& pass, const std::string& text) {
      fmt::print(stderr, "=== after {} ===\n{}\n", pass, text);
    };
  auto src = generate_kernel(*task, schedule, o);
  if (!src) {
    print_error(src.error().message());
    return 1;
  }
  if (a.out.empty() && !a.json) {
    fmt::print("{}", *src);
    return 0;
  }
  if (!a.out.empty())
    if (Status w = write_file_atomic(a.out, *src); !w.ok()) {
      print_error(w.message());
      return 2;
    }
  if (a.json)
    print_json(kLowerSchema,
               {{"task", task->name},
                {"target", a.target},
                {"schedule", schedule_json(schedule, a.schedule)},
                {"source", *src},
                {"output", a.out.empty() ? nlohmann::json() : nlohmann::json(a.out)}});
  return 0;
}

}  // namespace

Expected<std::string> lower_schedule_file(const Task& task, const std::string& path,
                                          const std::string& text) {
  auto s = sched::parse_schedule(text, path);
  if (!s) return s.error();
  return generate_kernel(task, *s, LowerOptions{});
}

void add_lower_command(CLI::App& app) {
  auto args = std::make_shared<LowerArgs>();
  CLI::App* cmd =
      app.add_subcommand("lower", "Generate C++ for a task from its TE spec and a schedule");
  cmd->add_option("task", args->task_dir, "Task directory (task.toml with a [te] spec)")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--schedule,-s", args->schedule, "Schedule file (default: the naive schedule)")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--output", args->out, "Write the C++ here instead of stdout");
  cmd->add_option("--target", args->target, "avx512, avx2 or scalar")
      ->check(CLI::IsMember({"avx512", "avx2", "scalar"}));
  cmd->add_flag("--dump-ir", args->dump_ir, "Print the IR after each lowering pass to stderr");
  cmd->add_flag("--json", args->json,
                fmt::format("Print one JSON document (schema \"{}\", docs/json.md): the source "
                            "and the schedule (with -o the source is written there too)",
                            kLowerSchema));
  cmd->callback([args] { throw CLI::RuntimeError(run_lower(*args)); });
}

}  // namespace kf
