// `kforge report RUN`: one self-contained HTML page per run, readable with no network and no
// script: what was asked (task, mode, brain, budget), what came of it (the best's time, its
// speedups over the reference and the library by median and min, its share of the roofline, the
// final run's verdict), how it went (best-so-far over evaluations, the graph of candidates and
// moves, the journey with every attempt), the best kernel's code, and the machine it was
// measured on. Everything shown comes from the store; every text is escaped (report/html_text.h).
//
//   auto data = load_report(store, run_id);
//   if (!data) return data.error();
//   write_file_atomic(path, report_html(*data));
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/machine.h"
#include "report/svg.h"
#include "store/store.h"
#include "support/status.h"

namespace kf::report {

struct ReportData {
  RunRecord run;
  std::vector<AttemptRecord> attempts;
  std::vector<MessageRecord> messages;
  std::optional<CandidateRecord> best;        // the run's best candidate, when it has one
  std::map<std::string, std::string> parent;  // candidate key -> its parent's key (provenance)
  std::optional<MachineInfo> machine;         // from the probe's cache, when it is there
  std::string machine_id;                     // the fingerprint the evaluations name
};

// Reads the run, its attempts, messages, candidates' parents, best and machine. Fails when the
// run is unknown or the store fails; missing parts (no best yet, no machine file) stay empty.
Expected<ReportData> load_report(Store& store, const std::string& run_id);

// The run's graph: a search or chat run's nodes are its attempts with an edge; an optimize
// run's, each candidate it measured, under the candidate it was derived from.
std::vector<GraphNode> graph_of(const ReportData& d);
// Every evaluation of the run in order (the final run's left out).
std::vector<CurvePoint> curve_of(const ReportData& d);
// The reference's and the library's median times (0: unknown).
std::pair<double, double> anchors(const ReportData& d);

// The page, complete (<!doctype html> to </html>), with its style inline.
std::string report_html(const ReportData& data);

}  // namespace kf::report
