// `kforge bench --html FILE`: the suite table as one self-contained page (no script, nothing
// fetched): each solution's summary (correct tasks, geometric mean speedups, fast_p), a chart per
// category of the tasks' speedups over their reference (one bar per solution, a line at 1x), and
// the full table. Every text is escaped (report/html_text.h): task names and messages come from
// task folders and candidates.
//
//   std::string page = bench_html(doc, categories);   // doc: the kforge-bench/1 document
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kf::report {

// One task's bars: a value per solution (0: none: failed, missing or not timed).
struct BarGroup {
  std::string label;
  std::vector<double> values;
};

// Horizontal bars on a log axis, one group per task, one bar per series, a dashed line at 1x.
std::string bars_svg(const std::vector<BarGroup>& groups, const std::vector<std::string>& series);

// `doc` is the bench document (rows, summary, suite, threads, machine); `categories` maps a
// task's folder name to its category (a task missing from it is "other").
std::string bench_html(const nlohmann::json& doc,
                       const std::map<std::string, std::string>& categories);

}  // namespace kf::report
