// The pictures of a run report (report/report.h), as inline SVG: no script, no network, and
// every text in them escaped (report/html_text.h).
//
//   std::string tree = tree_svg(nodes);                       // the candidates and their moves
//   std::string curve = curve_svg(points, ref_s, lib_s);      // best-so-far over evaluations
#pragma once

#include <string>
#include <vector>

namespace kf::report {

// A candidate of the run and the move that made it from its parent ("" for a root).
struct GraphNode {
  std::string key, parent;
  std::string label;     // the move or the strategy, for people
  std::string verdict;   // "ok", "wrong_answer", ...
  std::string proposer;  // builtin, llm, human, files ("" when unknown)
  double median_s = 0;   // 0 when not timed
  int seq = 0;           // the attempt that judged it (a link to the journey's row)
  bool best = false;
};

// The nodes as a tree laid out left to right (depth) and top to bottom (leaf order), each a dot
// coloured by its verdict with its label and time, the best ringed; a node whose parent is not
// among them is a root. Hovering a node shows its key, proposer and verdict.
std::string tree_svg(const std::vector<GraphNode>& nodes);

// One evaluation of the run, in order.
struct CurvePoint {
  int evaluation = 0;
  double median_s = 0;  // 0 when it failed or was not timed
};

// Every timed evaluation as a dot, the best so far as a step line, on a log time axis; the
// reference's and the library's medians as dashed lines when known (> 0).
std::string curve_svg(const std::vector<CurvePoint>& points, double reference_s, double library_s);

}  // namespace kf::report
