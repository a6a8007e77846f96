// `kforge bench --html`: the page has a chart per category with a bar per solution that ran ok,
// every row in its table, and task names and messages escaped (they come from folders and
// candidates).
#include "report/bench_page.h"

#include <gtest/gtest.h>

#include <string>

#include "support/text_count.h"

namespace kf::report {
namespace {

using testing::count;

nlohmann::json row(const std::string& task, const std::string& solution, const std::string& status,
                   double vs_ref) {
  nlohmann::json r = {{"task", task},
                      {"solution", solution},
                      {"status", status},
                      {"message", status == "ok" ? "" : "<b>crashed</b>"}};
  if (status == "ok")
    r["result"] = {{"timing", {{"median_s", 0.002}}},
                   {"roofline", {{"gflops", 10.0}, {"gbps", 5.0}, {"fraction", 0.25}}},
                   {"vs_reference", {{"median", vs_ref}}},
                   {"vs_baseline", {{"median", 0.5}}}};
  return r;
}

TEST(BenchPage, AChartPerCategoryABarPerPassingSolutionAndEveryTextEscaped) {
  const nlohmann::json doc = {
      {"suite", "bench/<suite>"},
      {"threads", 1},
      {"machine", {{"cpu_model", "Test CPU & co"}}},
      {"rows",
       {row("08_gemm", "reference", "ok", 1.0), row("08_gemm", "mine", "ok", 3.2),
        row("12_<script>", "reference", "ok", 1.0), row("12_<script>", "mine", "wrong_answer", 0),
        row("13_ce", "reference", "ok", 1.0), row("13_ce", "mine", "ok", 0.4)}},
      {"summary",
       {{{"solution", "reference"}, {"tasks", 3}, {"correct", 3}},
        {{"solution", "mine"},
         {"tasks", 3},
         {"correct", 2},
         {"geomean_speedup_vs_reference", 1.13}}}}};
  const std::string page =
      bench_html(doc, {{"08_gemm", "matmul"}, {"12_<script>", "norm"}, {"13_ce", "norm"}});
  EXPECT_EQ(count(page, "<svg class=\"bars\""), 2) << "one chart per category";
  EXPECT_EQ(count(page, "<h2>matmul: "), 1);
  EXPECT_EQ(count(page, "<h2>norm: "), 1);
  // Five rows passed: five bars (the failed one has none), each with its value.
  EXPECT_EQ(count(page, "<rect x=") - 2 * 2, 5) << "each chart's legend has a rect per solution";
  EXPECT_NE(page.find("mine: 3.20x"), std::string::npos);
  EXPECT_NE(page.find("mine: 0.40x"), std::string::npos);
  EXPECT_EQ(count(page, "<tr><td>"), 6) << "every row in the table";
  EXPECT_EQ(page.find("<script>"), std::string::npos) << "a task name is text, never markup";
  EXPECT_EQ(page.find("<b>crashed"), std::string::npos);
  EXPECT_NE(page.find("12_&lt;script&gt;"), std::string::npos);
  EXPECT_NE(page.find("Test CPU &amp; co"), std::string::npos);
  EXPECT_NE(page.find("geomean 1.13x vs reference"), std::string::npos);
}

TEST(BenchPage, AnEmptyDocumentIsStillAPage) {
  const std::string page = bench_html(nlohmann::json::object(), {});
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  EXPECT_EQ(count(page, "<svg"), 0);
}

}  // namespace
}  // namespace kf::report
