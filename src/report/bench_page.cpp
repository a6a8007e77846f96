#include "report/bench_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/html_text.h"

namespace kf::report {
namespace {

constexpr double kLabel = 260, kWidth = 460, kBar = 9, kGap = 8, kTop = 24;
const char* const kColours[] = {"#1e88e5", "#43a047", "#fb8c00", "#8e24aa", "#00897b", "#6d4c41"};

double num(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0;
}

std::string str(const nlohmann::json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

std::string cell(double v, const char* spec) {
  return v > 0 ? fmt::format(fmt::runtime(spec), v) : "-";
}

constexpr const char* kStyle = R"(
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px auto; max-width: 1180px; color: #263238; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.sub { color: #607d8b; } .cards { display: flex; flex-wrap: wrap; gap: 12px; margin: 16px 0; }
.card { border: 1px solid #cfd8dc; border-radius: 6px; padding: 8px 14px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid #eceff1; }
td.r, th.r { text-align: right; white-space: nowrap; } .bad { color: #c62828; }
svg text { font: 12px system-ui, sans-serif; fill: #37474f; }
)";

std::string summary_cards(const nlohmann::json& doc) {
  std::string out = "<div class=cards>";
  for (const nlohmann::json& s : doc.value("summary", nlohmann::json::array())) {
    out += fmt::format(
        "<div class=card><b>{}</b><br>{} of {} correct<br>geomean {} vs reference, {} vs "
        "baseline</div>",
        html_escape(str(s, "solution")), s.value("correct", 0), s.value("tasks", 0),
        cell(num(s, "geomean_speedup_vs_reference"), "{:.2f}x"),
        cell(num(s, "geomean_speedup_vs_baseline"), "{:.2f}x"));
  }
  return out + "</div>";
}

std::string table(const nlohmann::json& rows, const std::map<std::string, std::string>& cat) {
  std::string out =
      "<table><tr><th>task</th><th>category</th><th>solution</th><th>verdict</th><th "
      "class=r>median</th><th class=r>GFLOP/s</th><th class=r>GB/s</th><th class=r>% roof</th><th "
      "class=r>vs ref</th><th class=r>vs base</th></tr>\n";
  for (const nlohmann::json& r : rows) {
    const nlohmann::json res = r.value("result", nlohmann::json::object());
    const nlohmann::json roof = res.value("roofline", nlohmann::json::object());
    const std::string task = str(r, "task"), status = str(r, "status");
    auto c = cat.find(task);
    out += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td class=r>{}</td><td "
        "class=r>{}</td><td class=r>{}</td><td class=r>{}</td><td class=r>{}</td><td "
        "class=r>{}</td></tr>\n",
        html_escape(task), html_escape(c == cat.end() ? "other" : c->second),
        html_escape(str(r, "solution")), status == "ok" ? "" : " class=bad",
        html_escape(status == "ok" ? status : status + ": " + str(r, "message").substr(0, 160)),
        cell(1e3 * num(res.value("timing", nlohmann::json::object()), "median_s"), "{:.3f} ms"),
        cell(num(roof, "gflops"), "{:.1f}"), cell(num(roof, "gbps"), "{:.1f}"),
        cell(100 * num(roof, "fraction"), "{:.0f}%"),
        cell(num(res.value("vs_reference", nlohmann::json::object()), "median"), "{:.2f}x"),
        cell(num(res.value("vs_baseline", nlohmann::json::object()), "median"), "{:.2f}x"));
  }
  return out + "</table>\n";
}

}  // namespace

std::string bars_svg(const std::vector<BarGroup>& groups, const std::vector<std::string>& series) {
  double lo = 1, hi = 1;
  for (const BarGroup& g : groups)
    for (double v : g.values)
      if (v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
  lo = std::pow(10, std::floor(std::log10(lo))), hi = std::pow(10, std::ceil(std::log10(hi)));
  if (hi <= lo) hi = lo * 10;
  auto x = [&](double v) {
    return kLabel + kWidth * (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  };
  const double group_h = series.size() * kBar + kGap;
  const double h = kTop + groups.size() * group_h + 24;
  std::string out = fmt::format(
      "<svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0:.0f}\" "
      "height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" aria-label=\"speedup over "
      "the reference\">\n",
      kLabel + kWidth + 60, h);
  for (size_t s = 0; s < series.size(); ++s)
    out += fmt::format(
        "<rect x=\"{:.0f}\" y=\"4\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.0f}\" "
        "y=\"13\">{}</text>\n",
        kLabel + 130.0 * s, kColours[s % 6], kLabel + 130.0 * s + 14, html_escape(series[s]));
  for (size_t g = 0; g < groups.size(); ++g) {
    const double y = kTop + g * group_h;
    out +=
        fmt::format("<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", kLabel - 8,
                    y + series.size() * kBar / 2 + 4, html_escape(groups[g].label.substr(0, 40)));
    for (size_t s = 0; s < groups[g].values.size() && s < series.size(); ++s) {
      const double v = groups[g].values[s];
      if (v <= 0) continue;
      out += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.0f}\" "
          "fill=\"{}\"><title>{} "
          "{}: {:.2f}x</title></rect>\n",
          std::min(x(1), x(v)), y + s * kBar, std::abs(x(v) - x(1)), kBar - 1, kColours[s % 6],
          html_escape(groups[g].label), html_escape(series[s]), v);
    }
  }
  for (double t = lo; t <= hi * 1.0001; t *= 10)
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\" "
        "stroke=\"{3}\"{4}/><text "
        "x=\"{0:.1f}\" y=\"{5:.0f}\" text-anchor=\"middle\">{6}x</text>\n",
        x(t), kTop - 4, h - 20, t == 1 ? "#455a64" : "#eceff1",
        t == 1 ? " stroke-dasharray=\"4 3\"" : "", h - 6, fmt::format("{:g}", t));
  return out + "</svg>\n";
}

std::string bench_html(const nlohmann::json& doc,
                       const std::map<std::string, std::string>& categories) {
  const nlohmann::json rows = doc.value("rows", nlohmann::json::array());
  std::vector<std::string> series;
  for (const nlohmann::json& s : doc.value("summary", nlohmann::json::array()))
    series.push_back(str(s, "solution"));
  // category -> task -> its bars, in the table's order
  std::map<std::string, std::vector<BarGroup>> charts;
  for (const nlohmann::json& r : rows) {
    const std::string task = str(r, "task");
    auto c = categories.find(task);
    std::vector<BarGroup>& groups = charts[c == categories.end() ? "other" : c->second];
    if (groups.empty() || groups.back().label != task)
      groups.push_back({task, std::vector<double>(series.size(), 0)});
    const auto at = std::find(series.begin(), series.end(), str(r, "solution"));
    if (at != series.end() && str(r, "status") == "ok")
      groups.back().values[at - series.begin()] =
          num(r.value("result", nlohmann::json::object()).value("vs_reference", nlohmann::json()),
              "median");
  }
  const nlohmann::json m = doc.value("machine", nlohmann::json::object());
  std::string page = fmt::format(
      "<!doctype html>\n<html lang=en><head><meta charset=utf-8><title>kforge bench: {0}</title>"
      "<style>{1}</style></head><body>\n<h1>kforge bench: {0}</h1>\n<p class=sub>{2} tasks, {3} "
      "thread(s); {4}</p>\n",
      html_escape(str(doc, "suite")), kStyle, rows.size() / std::max<size_t>(1, series.size()),
      doc.value("threads", 1), html_escape(str(m, "cpu_model")));
  page += summary_cards(doc);
  for (const auto& [category, groups] : charts)
    page += "<h2>" + html_escape(category) + ": speedup over the reference</h2>\n" +
            bars_svg(groups, series);
  page += "<h2>Every task</h2>\n" + table(rows, categories);
  return page + "</body></html>\n";
}

}  // namespace kf::report
