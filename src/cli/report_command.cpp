#include "cli/report_command.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>

#include "cli/cli_output.h"
#include "report/report.h"
#include "store/sqlite_store.h"
#include "support/fs.h"

namespace kf {
namespace {

// `kforge report --json`: where the page went (docs/schemas/report.schema.json).
constexpr const char* kReportSchema = "kforge-report/1";

struct ReportArgs {
  std::string run, out, store;
  bool json = false;
};

int run_report(const ReportArgs& a) {
  auto store = open_existing_store(a.store);
  if (!store) {
    print_error(store.error().message());
    return 2;
  }
  auto data = report::load_report(**store, a.run);
  if (!data) {
    print_error(data.error().message());
    return 2;
  }
  std::filesystem::path out = a.out;
  if (out.empty()) {
    const std::string dir = data->run.options.is_object()
                                ? data->run.options.value("out_dir", std::string())
                                : std::string();
    out = (dir.empty() ? default_output_dir(data->run.id) : std::filesystem::path(dir)) /
          "report.html";
  }
  std::error_code ec;
  if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path(), ec);
  if (Status st = write_file_atomic(out, report::report_html(*data)); !st.ok()) {
    print_error(st.message());
    return 2;
  }
  if (a.json) {
    print_json(
        kReportSchema,
        {{"run", data->run.id}, {"file", out.string()}, {"attempts", data->attempts.size()}});
    return 0;
  }
  fmt::print("wrote {} (run {}, {} attempts)\n", out.string(), data->run.id, data->attempts.size());
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Write a run as one self-contained HTML page: its graph, best-so-far curve, "
      "journey, best kernel and machine (docs/report.md)");
  cmd->add_option("run", a->run, "The run (its id, or a prefix of one; see `kforge runs`)")
      ->required();
  cmd->add_option("-o,--output", a->out,
                  "The HTML file to write (default: report.html in the run's output folder)");
  cmd->add_option("--store", a->store, kStoreHelp);
  cmd->add_flag("--json", a->json,
                fmt::format("Print where the page went as one JSON document (schema \"{}\", "
                            "docs/json.md)",
                            kReportSchema));
  cmd->callback([a] { throw CLI::RuntimeError(run_report(*a)); });
}

}  // namespace kf
