#include "cli/export_command.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <memory>

#include "cli/cli_output.h"
#include "export/export_run.h"
#include "store/sqlite_store.h"

namespace kf {
namespace {

// `kforge export --json`: what was written, where, and how to use it
// (docs/schemas/export.schema.json).
constexpr const char* kExportSchema = "kforge-export/1";

struct ExportArgs {
  ExportOptions options;
  std::string out, task, store;
  bool json = false;
};

nlohmann::json export_json(const ExportResult& r, const ExportArgs& a) {
  return {
      {"run", r.run_id},
      {"task", r.task},
      {"function", r.function},
      {"call", r.call},
      {"candidate", r.candidate_key},
      {"kind", r.kind},
      {"recipe", r.recipe},
      {"target", a.options.target.empty() ? nlohmann::json() : nlohmann::json(a.options.target)},
      {"target_note", r.target_note},
      {"flags", r.flags},
      {"linkage", a.options.c_linkage ? "c" : "c++"},
      {"out_dir", a.out},
      {"files", r.files},
      {"warnings", r.warnings}};
}

int run_export(ExportArgs a) {
  auto store = open_existing_store(a.store);
  if (!store) {
    print_error(store.error().message());
    return 2;
  }
  a.options.out_dir = a.out;
  a.options.task_dir = a.task;
  auto r = export_run(**store, a.options);
  if (!r) {
    print_error(r.error().message());
    return 2;
  }
  for (const std::string& w : r->warnings) fmt::print(stderr, "warning: {}\n", terminal_text(w));
  if (a.json) {
    print_json(kExportSchema, export_json(*r, a));
    return 0;
  }
  fmt::print("exported {} from run {} (task {}, candidate {}: {}, {}) to {}\n", r->function,
             r->run_id, terminal_text(r->task), r->candidate_key, r->kind, terminal_text(r->recipe),
             a.out);
  fmt::print("  target: {}\n  flags: {}\n  files: {}\n", r->target_note, r->flags,
             fmt::join(r->files, " "));
  fmt::print(
      "  use: add_subdirectory({}) and target_link_libraries(your_target PRIVATE {}); "
      "#include \"{}.h\" and call {}(...)\n",
      a.out, r->function, r->function, r->call);
  return 0;
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto a = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write a run's best kernel as a header, a source and a CMake target (docs/export.md)");
  cmd->add_option("run", a->options.run, "The run (its id, or a prefix of one; see `kforge runs`)")
      ->required();
  cmd->add_option("-o,--output", a->out, "The folder to write (created if needed)")->required();
  cmd->add_option("--target", a->options.target,
                  "native, avx512, avx2 or scalar: generated kernels are generated again for it, "
                  "written ones only get its flags (default: the build the run judged)");
  auto* ns = cmd->add_option("--namespace", a->options.ns,
                             "The function's namespace (default kforge_TASK)");
  cmd->add_flag("--c-linkage", a->options.c_linkage,
                "Declare the function extern \"C\" (a header C can include) instead of in a "
                "namespace")
      ->excludes(ns);
  cmd->add_option("--task", a->task,
                  "The task folder, if it moved since the run (default: the run's)");
  cmd->add_option("--store", a->store, kStoreHelp);
  cmd->add_flag("--json", a->json,
                fmt::format("Print what was written as one JSON document (schema \"{}\", "
                            "docs/json.md)",
                            kExportSchema));
  cmd->callback([a] { throw CLI::RuntimeError(run_export(*a)); });
}

}  // namespace kf
