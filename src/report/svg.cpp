#include "report/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "report/html_text.h"

namespace kf::report {
namespace {

constexpr double kColumn = 28, kRow = 22, kLabelWidth = 420, kPad = 12;
constexpr size_t kLabelChars = 56;

std::string colour(const std::string& verdict) {
  if (verdict == "ok") return "#2e7d32";
  if (verdict == "duplicate" || verdict == "not_applicable" || verdict.empty()) return "#9e9e9e";
  return "#c62828";
}

std::string time_text(double s) {
  if (s <= 0) return "";
  if (s >= 1) return fmt::format("{:.2f} s", s);
  if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.1f} us", s * 1e6);
}

std::string cut(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  size_t end = n - 1;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;  // UTF-8 lead
  return s.substr(0, end) + "~";
}

}  // namespace

std::string tree_svg(const std::vector<GraphNode>& nodes) {
  std::map<std::string, std::vector<size_t>> below;
  std::set<std::string> keys;
  for (const GraphNode& n : nodes) keys.insert(n.key);
  std::vector<size_t> roots;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].parent.empty() || !keys.contains(nodes[i].parent) ||
        nodes[i].parent == nodes[i].key)
      roots.push_back(i);
    else
      below[nodes[i].parent].push_back(i);
  }
  // Every node takes a row of its own, in depth-first order, indented by its depth (an indented
  // tree: labels never overlap). A node is placed once (the first path to it), so a cycle in
  // hostile data cannot recurse forever.
  std::vector<double> row(nodes.size(), -1), depth(nodes.size(), 0);
  std::set<std::string> placed;
  double next_row = 0;
  int max_depth = 0;
  std::function<void(size_t, int)> place = [&](size_t i, int d) {
    if (!placed.insert(nodes[i].key).second) return;
    depth[i] = d;
    max_depth = std::max(max_depth, d);
    row[i] = next_row++;
    if (auto it = below.find(nodes[i].key); it != below.end())
      for (size_t c : it->second)
        if (!placed.contains(nodes[c].key)) place(c, d + 1);
  };
  for (size_t r : roots) place(r, 0);
  for (size_t i = 0; i < nodes.size(); ++i)  // nodes reached by no root (a cycle): own rows
    if (row[i] < 0) place(i, 0);
  const auto x = [&](size_t i) { return kPad + 8 + depth[i] * kColumn; };
  const auto y = [&](size_t i) { return kPad + 8 + row[i] * kRow; };
  const double width = kPad * 2 + 16 + max_depth * kColumn + kLabelWidth;
  const double height = kPad * 2 + 16 + std::max(0.0, next_row - 1) * kRow;
  std::string svg = fmt::format(
      "<svg class=\"tree\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" "
      "height=\"{:.0f}\" viewBox=\"0 0 {:.0f} {:.0f}\" role=\"img\" aria-label=\"search graph\">\n",
      width, height, width, height);
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < nodes.size(); ++i) index.try_emplace(nodes[i].key, i);
  for (size_t i = 0; i < nodes.size(); ++i) {
    auto p = index.find(nodes[i].parent);
    if (p == index.end() || p->second == i) continue;
    const double x0 = x(p->second), y0 = y(p->second), x1 = x(i), y1 = y(i);
    svg += fmt::format(
        "<path d=\"M{:.1f},{:.1f} V{:.1f} H{:.1f}\" fill=\"none\" stroke=\"#b0bec5\"/>\n", x0, y0,
        y1, x1);
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& n = nodes[i];
    const std::string label = cut(n.label.empty() ? n.key.substr(0, 10) : n.label, kLabelChars);
    svg += fmt::format(
        "<a href=\"#a{}\"><g class=\"node\"><title>{}</title><circle cx=\"{:.1f}\" "
        "cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"{}/><text x=\"{:.1f}\" "
        "y=\"{:.1f}\">{}{}</text></g></a>\n",
        n.seq,
        html_escape(fmt::format("{} ({}{}): {}{}", n.label, n.key.substr(0, 12),
                                n.proposer.empty() ? "" : ", by " + n.proposer, n.verdict,
                                n.median_s > 0 ? " " + time_text(n.median_s) : "")),
        x(i), y(i), n.best ? 7 : 5, colour(n.verdict),
        n.best ? " stroke=\"#f9a825\" stroke-width=\"3\"" : "", x(i) + 12, y(i) + 4,
        html_escape(label),
        n.median_s > 0
            ? "<tspan class=\"t\"> " + html_escape(time_text(n.median_s)) + "</tspan>"
            : (n.verdict == "ok" ? ""
                                 : " <tspan class=\"bad\">" + html_escape(n.verdict) + "</tspan>"));
  }
  return svg + "</svg>\n";
}

std::string curve_svg(const std::vector<CurvePoint>& points, double reference_s, double library_s) {
  constexpr double kW = 760, kH = 320, kLeft = 70, kRight = 150, kTop = 16, kBottom = 40;
  double lo = INFINITY, hi = 0;
  int last = 1;
  for (const CurvePoint& p : points) {
    last = std::max(last, p.evaluation);
    if (p.median_s <= 0) continue;
    lo = std::min(lo, p.median_s);
    hi = std::max(hi, p.median_s);
  }
  for (double a : {reference_s, library_s})
    if (a > 0) {
      lo = std::min(lo, a);
      hi = std::max(hi, a);
    }
  std::string svg = fmt::format(
      "<svg class=\"curve\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" "
      "aria-label=\"best so far over evaluations\">\n",
      kW, kH);
  if (hi <= 0) return svg + "<text x=\"20\" y=\"40\">nothing was timed</text></svg>\n";
  const double l0 = std::log10(lo / 1.3), l1 = std::log10(hi * 1.3);
  const auto px = [&](double e) { return kLeft + (kW - kLeft - kRight) * (e - 0.5) / last; };
  const auto py = [&](double s) {
    return kTop + (kH - kTop - kBottom) * (l1 - std::log10(s)) / (l1 - l0);
  };
  // Axes, with a tick at each 1, 2 and 5 of a decade inside the range.
  svg += fmt::format(
      "<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#455a64\"/>"
      "<line x1=\"{0}\" y1=\"{2}\" x2=\"{3}\" y2=\"{2}\" stroke=\"#455a64\"/>\n",
      kLeft, kTop, kH - kBottom, kW - kRight);
  // Ticks at 1, 2 and 5 of each decade; finer when the range is under a decade.
  const std::vector<double> marks = l1 - l0 < 1
                                        ? std::vector<double>{1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8}
                                        : std::vector<double>{1, 2, 5};
  for (int d = static_cast<int>(std::floor(l0)); d <= static_cast<int>(std::ceil(l1)); ++d)
    for (double m : marks) {
      const double s = m * std::pow(10.0, d);
      if (std::log10(s) < l0 || std::log10(s) > l1) continue;
      svg += fmt::format(
          "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eceff1\"/>"
          "<text class=\"ax\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
          kLeft, py(s), kW - kRight, kLeft - 6, py(s) + 4, time_text(s));
    }
  const int step = std::max(1, last / 10);
  for (int e = 1; e <= last; e += step)
    svg +=
        fmt::format("<text class=\"ax\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                    px(e), kH - kBottom + 16, e);
  svg += fmt::format(
      "<text class=\"ax\" x=\"{:.0f}\" y=\"{}\" text-anchor=\"middle\">evaluation</text>\n",
      (kLeft + kW - kRight) / 2, kH - 6);
  const auto anchor = [&](double s, const char* name, const char* stroke) {
    if (s <= 0) return;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-dasharray=\"6 4\"/><text class=\"ax\" x=\"{4}\" y=\"{5:.1f}\">{6} {7}</text>\n",
        kLeft, py(s), kW - kRight, stroke, kW - kRight + 6, py(s) + 4, name, time_text(s));
  };
  anchor(reference_s, "reference", "#6d4c41");
  anchor(library_s, "library", "#1565c0");
  std::string line;
  double best = 0;
  for (const CurvePoint& p : points) {
    if (p.median_s <= 0) {
      svg +=
          fmt::format("<text class=\"bad\" x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">×</text>\n",
                      px(p.evaluation), kTop + 4);
      continue;
    }
    svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"#78909c\"/>\n",
                       px(p.evaluation), py(p.median_s));
    if (best == 0 || p.median_s < best) {
      if (best > 0) line += fmt::format(" {:.1f},{:.1f}", px(p.evaluation), py(best));
      best = p.median_s;
      line += fmt::format(" {:.1f},{:.1f}", px(p.evaluation), py(best));
    }
  }
  if (best > 0) {
    line += fmt::format(" {:.1f},{:.1f}", px(last + 0.5), py(best));
    svg += "<polyline points=\"" + line.substr(1) +
           "\" fill=\"none\" stroke=\"#2e7d32\" stroke-width=\"2\"/>\n";
    svg += fmt::format("<text class=\"ax\" x=\"{}\" y=\"{:.1f}\">best {}</text>\n", kW - kRight + 6,
                       py(best) + 4, time_text(best));
  }
  return svg + "</svg>\n";
}

}  // namespace kf::report
