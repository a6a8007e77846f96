#include "cli/bench_command.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "cli/cli_output.h"
#include "harness/evaluator.h"
#include "harness/machine.h"
#include "report/bench_page.h"
#include "support/fs.h"
#include "support/json_text.h"

namespace kf {
namespace {

namespace fs = std::filesystem;

struct BenchArgs {
  std::string suite = "bench/jaxbench";
  std::vector<std::string> solutions = {"reference", "baseline"};
  std::vector<std::string> tasks;
  int threads = 1;
  double min_time = 0.5;
  bool json = false;      // the document on stdout instead of the table
  std::string json_file;  // the document written here too
  std::string html;       // the table and a chart per category as a page (report/bench_page.h)
};

// `kforge bench --json`: every row's result and each solution's summary
// (docs/schemas/bench.schema.json).
constexpr const char* kBenchSchema = "kforge-bench/1";

struct Row {
  std::string task, solution;
  std::string status;  // a verdict, "missing", or "error"
  std::string message;
  std::optional<RunResult> result;
};

bool selected(const std::string& name, const std::vector<std::string>& prefixes) {
  if (prefixes.empty()) return true;
  for (const auto& p : prefixes)
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

// The source for `solution` on `task`, with the libraries it may link; nullopt when missing.
std::optional<std::pair<std::string, std::vector<std::string>>> solution_source(
    const Task& task, const std::string& solution, std::string* why) {
  if (solution == "reference") return std::pair{task.reference_source, std::vector<std::string>{}};
  if (solution == "baseline") {
    if (!task.baseline) {
      *why = "the task has no baseline";
      return std::nullopt;
    }
    auto src = read_file(task.dir / task.baseline->file);
    if (!src) {
      *why = src.error().message();
      return std::nullopt;
    }
    return std::pair{*src, task.baseline->libs};
  }
  for (const char* ext : {".cpp"}) {
    fs::path p = fs::path(solution) / (task.name + ext);
    if (auto src = read_file(p)) return std::pair{*src, std::vector<std::string>{}};
  }
  *why = fmt::format("no {}/{}.cpp", solution, task.name);
  return std::nullopt;
}

std::string cell(double v, const char* fmt_spec) {
  return v > 0 ? fmt::format(fmt::runtime(fmt_spec), v) : "-";
}

void print_table(const std::vector<Row>& rows) {
  fmt::print("\n{:<44} {:<10} {:<13} {:>10} {:>9} {:>8} {:>7} {:>8} {:>8}\n", "task", "solution",
             "verdict", "median", "GFLOP/s", "GB/s", "%roof", "vs ref", "vs base");
  for (const Row& r : rows) {
    const RunResult* x = r.result ? &*r.result : nullptr;
    const bool timed = x && x->timing;
    fmt::print("{:<44} {:<10} {:<13} {:>10} {:>9} {:>8} {:>7} {:>8} {:>8}\n", r.task,
               fs::path(r.solution).filename().string().substr(0, 10), r.status,
               timed ? fmt::format("{:.3f} ms", x->timing->median_s * 1e3) : "-",
               timed && x->roofline ? cell(x->roofline->gflops, "{:.1f}") : "-",
               timed && x->roofline ? cell(x->roofline->gbps, "{:.1f}") : "-",
               timed && x->roofline ? cell(100 * x->roofline->fraction, "{:.0f}%") : "-",
               x ? cell(x->vs_reference.median, "{:.2f}x") : "-",
               x ? cell(x->vs_baseline.median, "{:.2f}x") : "-");
  }
}

nlohmann::json summarize(const std::vector<Row>& rows, const std::string& solution) {
  int tasks = 0, correct = 0;
  double log_ref = 0, log_base = 0;
  int n_ref = 0, n_base = 0;
  std::vector<double> vs_base;
  for (const Row& r : rows) {
    if (r.solution != solution) continue;
    ++tasks;
    if (r.status != "ok") continue;
    ++correct;
    const RunResult& x = *r.result;
    if (x.vs_reference.median > 0) log_ref += std::log(x.vs_reference.median), ++n_ref;
    if (x.vs_baseline.median > 0) {
      log_base += std::log(x.vs_baseline.median), ++n_base;
      vs_base.push_back(x.vs_baseline.median);
    }
  }
  nlohmann::json j = {{"solution", solution}, {"tasks", tasks}, {"correct", correct}};
  if (n_ref) j["geomean_speedup_vs_reference"] = std::exp(log_ref / n_ref);
  if (n_base) j["geomean_speedup_vs_baseline"] = std::exp(log_base / n_base);
  for (double p : {0.0, 1.0, 1.5, 2.0}) {
    int fast = p == 0 ? correct : 0;
    if (p > 0)
      for (double v : vs_base) fast += v >= p;
    j["fast_p"][fmt::format("{}", p)] = tasks ? static_cast<double>(fast) / tasks : 0.0;
  }
  return j;
}

int run_bench(const BenchArgs& a) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(a.suite, ec))
    if (e.is_directory() && fs::exists(e.path() / "task.toml") &&
        selected(e.path().filename().string(), a.tasks))
      dirs.push_back(e.path());
  if (ec || dirs.empty()) {
    fmt::print(stderr, "error: no tasks in {}\n", a.suite);
    return 2;
  }
  std::sort(dirs.begin(), dirs.end());
  auto machine = probe_machine({});
  if (!machine) {
    fmt::print(stderr, "error: machine probe failed: {}\n", machine.error().message());
    return 2;
  }
  std::vector<Row> rows;
  std::map<std::string, std::string> categories;  // task folder -> its category, for --html
  const size_t total = dirs.size() * a.solutions.size();
  for (const auto& dir : dirs) {
    auto task = load_task(dir);
    if (task) categories[dir.filename().string()] = task->category;
    for (const auto& solution : a.solutions) {
      Row row{.task = dir.filename().string(), .solution = solution};
      fmt::print(stderr, "[{}/{}] {} / {}\n", rows.size() + 1, total, row.task, solution);
      std::string why;
      auto src = task ? solution_source(*task, solution, &why) : std::nullopt;
      if (!task) {
        row.status = "error";
        row.message = task.error().message();
      } else if (!src) {
        row.status = "missing";
        row.message = why;
      } else {
        EvalOptions o;
        o.threads = a.threads;
        o.min_time_s = a.min_time;
        o.compile.libs = src->second;
        o.time_reference = true;
        o.time_baseline = solution != "baseline";
        o.machine = machine_limits(*machine, a.threads);
        o.remeasure = remeasure_machine(a.threads, o.compile.cxx);
        auto r = evaluate(*task, src->first, o);
        if (!r) {
          row.status = "error";
          row.message = r.error().message();
        } else {
          row.status = std::string(verdict_name(r->verdict));
          row.message = r->message;
          row.result = std::move(*r);
        }
      }
      if (row.status != "ok") fmt::print(stderr, "      {}: {}\n", row.status, row.message);
      rows.push_back(std::move(row));
    }
  }
  if (!a.json) print_table(rows);
  nlohmann::json out = {{"suite", a.suite},
                        {"threads", a.threads},
                        {"machine", machine->to_json()},
                        {"rows", nlohmann::json::array()},
                        {"summary", nlohmann::json::array()}};
  // The summary lines, on stderr when stdout holds the JSON document.
  std::FILE* text = a.json ? stderr : stdout;
  fmt::print(text, "\n");
  for (const auto& solution : a.solutions) {
    nlohmann::json s = summarize(rows, solution);
    fmt::print(text, "{}: {}/{} correct", solution, s["correct"].get<int>(), s["tasks"].get<int>());
    if (s.contains("geomean_speedup_vs_reference"))
      fmt::print(text, ", geomean {:.2f}x vs reference",
                 s["geomean_speedup_vs_reference"].get<double>());
    if (s.contains("geomean_speedup_vs_baseline"))
      fmt::print(text, ", geomean {:.2f}x vs baseline",
                 s["geomean_speedup_vs_baseline"].get<double>());
    fmt::print(text, "; fast_0 {:.2f} fast_1 {:.2f} fast_1.5 {:.2f} fast_2 {:.2f}\n",
               s["fast_p"]["0"].get<double>(), s["fast_p"]["1"].get<double>(),
               s["fast_p"]["1.5"].get<double>(), s["fast_p"]["2"].get<double>());
    out["summary"].push_back(s);
  }
  for (const Row& r : rows) {
    nlohmann::json j = {
        {"task", r.task}, {"solution", r.solution}, {"status", r.status}, {"message", r.message}};
    if (r.result) j["result"] = r.result->to_json();
    out["rows"].push_back(j);
  }
  if (!a.json_file.empty()) {
    const std::string doc = dump_json(versioned_json(kBenchSchema, out), 2);
    if (auto st = write_file_atomic(a.json_file, doc); !st.ok()) {
      print_error(st.message());
      return 2;
    }
  }
  if (!a.html.empty()) {
    if (auto st = write_file_atomic(a.html, report::bench_html(out, categories)); !st.ok()) {
      print_error(st.message());
      return 2;
    }
    fmt::print(stderr, "wrote {}\n", a.html);
  }
  if (a.json) print_json(kBenchSchema, std::move(out));
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Run solutions over a task suite, side by side");
  cmd->add_option("suite", args->suite, "Suite directory (default bench/jaxbench)");
  cmd->add_option("--solutions", args->solutions,
                  "reference, baseline, or directories of candidates named after the tasks")
      ->delimiter(',');
  cmd->add_option("--tasks", args->tasks, "Task name prefixes, e.g. 08,12")->delimiter(',');
  cmd->add_option("--threads,-t", args->threads, "Threads for the kernels")
      ->check(CLI::Range(1, 256));
  cmd->add_option("--min-time", args->min_time, "Measured seconds per solution per task")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--json", args->json,
                fmt::format("Print every result as one JSON document (schema \"{}\", "
                            "docs/json.md) instead of the table",
                            kBenchSchema));
  cmd->add_option("--json-file", args->json_file,
                  "Also write that document to this file (the table still prints)");
  cmd->add_option("--html", args->html,
                  "Also write the table and a chart per category as one self-contained HTML page");
  cmd->callback([args] {
    int rc = run_bench(*args);
    if (rc) throw CLI::RuntimeError(rc);
  });
}

}  // namespace kf
