// The run report (report/report.h, report/svg.h, report/html_text.h): escaping of hostile text,
// the C++ highlighting, the graph and the curve, and a page built from a store.
#include "report/report.h"

#include <gtest/gtest.h>

#include <string>

#include "report/html_text.h"
#include "report/svg.h"
#include "store/memory_store.h"
#include "support/text_count.h"

namespace kf::report {
namespace {

using testing::count;

TEST(HtmlEscape, MarkupQuotesControlsAndBadUtf8) {
  EXPECT_EQ(html_escape("<a href=\"x\">&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape("a\x1b[2Jb\tc\n"), "a[2Jb\tc\n");
  EXPECT_EQ(html_escape("ok \xff"), "ok \xEF\xBF\xBD");
}

TEST(HighlightCpp, TokensBecomeSpansAndNothingBecomesMarkup) {
  const std::string h = highlight_cpp(
      "#include <cstdint>\n// a < b\nfloat f(int n) { return n * 2.5f; } // \"x\"\nchar c = '<';\n"
      "const char* s = \"</pre><script>alert(1)</script>\";\n/* <b> */");
  EXPECT_NE(h.find("<span class=\"p\">#include &lt;cstdint&gt;</span>"), std::string::npos) << h;
  EXPECT_NE(h.find("<span class=\"c\">// a &lt; b</span>"), std::string::npos) << h;
  EXPECT_NE(h.find("<span class=\"k\">float</span> f(<span class=\"k\">int</span> n)"),
            std::string::npos)
      << h;
  EXPECT_NE(h.find("<span class=\"n\">2.5f</span>"), std::string::npos) << h;
  EXPECT_NE(h.find("<span class=\"s\">&#39;&lt;&#39;</span>"), std::string::npos) << h;
  EXPECT_EQ(h.find("<script"), std::string::npos) << h;
  EXPECT_EQ(h.find("</pre"), std::string::npos) << h;
  EXPECT_EQ(h.find("<b>"), std::string::npos) << h;
  // Every tag in the output is one of its spans.
  EXPECT_EQ(count(h, "<"), count(h, "<span") + count(h, "</span>")) << h;
  // An unterminated literal or comment ends at the text's end.
  EXPECT_EQ(highlight_cpp("x = \"abc"), "x = <span class=\"s\">&quot;abc</span>");
  EXPECT_EQ(highlight_cpp("/* open"), "<span class=\"c\">/* open</span>");
}

TEST(TreeSvg, EveryNodeOnItsOwnRowUnderItsParent) {
  std::vector<GraphNode> nodes = {
      {.key = "root", .label = "default schedule", .verdict = "ok", .median_s = 2e-3, .seq = 1},
      {.key = "a",
       .parent = "root",
       .label = "tile",
       .verdict = "ok",
       .median_s = 1e-3,
       .seq = 2,
       .best = true},
      {.key = "b", .parent = "root", .label = "<bad>", .verdict = "wrong_answer", .seq = 3},
      {.key = "c",
       .parent = "a",
       .label = "vectorize",
       .verdict = "ok",
       .median_s = 1.5e-3,
       .seq = 4}};
  const std::string svg = tree_svg(nodes);
  EXPECT_EQ(count(svg, "<circle"), 4) << svg;
  EXPECT_EQ(count(svg, "<path"), 3) << "one edge per node with a parent";
  EXPECT_EQ(count(svg, "stroke=\"#f9a825\""), 1) << "the best ringed";
  EXPECT_NE(svg.find("href=\"#a4\""), std::string::npos);
  EXPECT_NE(svg.find("&lt;bad&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<bad>"), std::string::npos);
  // Rows in depth-first order, one per node: root, a, c, b; each indented by its depth.
  struct Place {
    double cx = 0, cy = 0;
  };
  // A node is <title>LABEL (key): ...</title><circle cx=.. cy=../><text>..</text>.
  auto place_of = [&svg](const std::string& label) {
    const size_t at = svg.find("<title>" + label);
    EXPECT_NE(at, std::string::npos) << label;
    const size_t circle = svg.find("<circle", at);
    EXPECT_NE(circle, std::string::npos) << label;
    auto attr = [&](const char* name) {
      const size_t v = svg.find(std::string(name) + "=\"", circle) + std::string(name).size() + 2;
      return std::stod(svg.substr(v, svg.find('"', v) - v));
    };
    return Place{attr("cx"), attr("cy")};
  };
  const Place root = place_of("default schedule"), a = place_of("tile"), c = place_of("vectorize"),
              b = place_of("&lt;bad");
  EXPECT_DOUBLE_EQ(root.cy, 20.0);
  EXPECT_DOUBLE_EQ(a.cy, 42.0);
  EXPECT_DOUBLE_EQ(c.cy, 64.0) << "a's child comes right under a";
  EXPECT_DOUBLE_EQ(b.cy, 86.0);
  EXPECT_LT(root.cx, a.cx);
  EXPECT_LT(a.cx, c.cx) << "c is one level deeper than a";
  EXPECT_DOUBLE_EQ(a.cx, b.cx) << "siblings at one depth";
}

TEST(TreeSvg, ACycleInTheDataStillEnds) {
  const std::string svg = tree_svg({{.key = "x", .parent = "y", .verdict = "ok", .seq = 1},
                                    {.key = "y", .parent = "x", .verdict = "ok", .seq = 2}});
  EXPECT_EQ(count(svg, "<circle"), 2);
}

TEST(CurveSvg, DotsTheBestSoFarAndTheAnchors) {
  const std::string svg =
      curve_svg({{1, 4e-3}, {2, 0}, {3, 2e-3}, {4, 3e-3}, {5, 1e-3}}, 5e-3, 1.5e-3);
  EXPECT_EQ(count(svg, "<circle"), 4) << "one per timed evaluation";
  EXPECT_EQ(count(svg, "×"), 1) << "one per failed evaluation";
  EXPECT_EQ(count(svg, "<polyline"), 1);
  EXPECT_NE(svg.find("reference 5.000 ms"), std::string::npos) << svg;
  EXPECT_NE(svg.find("library 1.500 ms"), std::string::npos) << svg;
  EXPECT_NE(svg.find("best 1.000 ms"), std::string::npos) << svg;
  EXPECT_NE(curve_svg({{1, 0}}, 0, 0).find("nothing was timed"), std::string::npos);
}

class ReportFromStore : public ::testing::Test {
 protected:
  static EvaluationRecord evaluation(const std::string& key, const std::string& candidate,
                                     double median_s) {
    return {.key = key,
            .candidate_key = candidate,
            .task = "rms<norm>",
            .machine = "fp-test",
            .threads = 1,
            .verdict = "ok",
            .median_s = median_s,
            .min_s = median_s};
  }
  void SetUp() override {
    RunRecord run{.id = "r-report",
                  .task_dir = "t",
                  .task_name = "rms<norm>",
                  .mode = "optimize",
                  .brain = "builtin",
                  .best_candidate = "kb"};
    run.summary = {{"stop_reason", "evaluation budget spent"},
                   {"evaluations", 2},
                   {"best", {{"median_s", 1e-3}, {"recipe", "tile()"}}},
                   {"final",
                    {{"median_s", 1e-3},
                     {"min_s", 0.9e-3},
                     {"verdict", "ok"},
                     {"bound", "memory"},
                     {"roofline_fraction", 0.5},
                     {"vs_reference", {{"median", 4.0}, {"min", 4.5}}},
                     {"vs_baseline", {{"median", 0.8}, {"min", 0.9}}}}}};
    ASSERT_TRUE(store.create_run(run).ok());
    ASSERT_TRUE(store.put_candidate({.key = "k0", .source = "void f() {}"}).ok());
    ASSERT_TRUE(store
                    .put_candidate({.key = "kb",
                                    .source = "// best\n</pre><script>alert(1)</script>",
                                    .provenance = {{"parent", "k0"}, {"origin", "builtin:tile"}}})
                    .ok());
    ASSERT_TRUE(
        store
            .record_evaluation(evaluation("e0", "k0", 4e-3), {.run_id = "r-report",
                                                              .seq = 1,
                                                              .kind = "baseline",
                                                              .strategy = "default",
                                                              .candidate_key = "k0",
                                                              .evaluation_key = "e0",
                                                              .verdict = "ok",
                                                              .median_s = 4e-3,
                                                              .detail = {{"vs_reference", 1.0}}})
            .ok());
    ASSERT_TRUE(store
                    .record_evaluation(evaluation("e1", "kb", 1e-3),
                                       {.run_id = "r-report",
                                        .seq = 2,
                                        .kind = "plan",
                                        .strategy = "tile<script>",
                                        .candidate_key = "kb",
                                        .evaluation_key = "e1",
                                        .verdict = "ok",
                                        .median_s = 1e-3,
                                        .detail = {{"message", "<img src=x onerror=alert(1)>"}}})
                    .ok());
    ASSERT_TRUE(store
                    .put_message({.run_id = "r-report",
                                  .seq = 1,
                                  .from_role = "planner",
                                  .to_role = "implementer",
                                  .type = "Plan",
                                  .body = {{"strategy", "tile"}, {"why", "a < b & c"}}})
                    .ok());
  }
  MemoryStore store;
};

TEST_F(ReportFromStore, APageWithEverySectionAndNoMarkupFromTheData) {
  auto data = load_report(store, "r-rep");  // a prefix of exactly one run
  ASSERT_TRUE(data) << data.error().message();
  EXPECT_EQ(data->parent.at("kb"), "k0");
  EXPECT_EQ(data->machine_id, "fp-test");
  EXPECT_FALSE(data->machine) << "no probe of that machine here";
  ASSERT_TRUE(data->best);
  const std::string page = report_html(*data);
  EXPECT_EQ(page.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  for (const char* section : {"Best median so far", "The graph", "The journey",
                              "The planner's reasons", "The best kernel", "The machine"})
    EXPECT_NE(page.find(section), std::string::npos) << section;
  EXPECT_NE(page.find("4.00x"), std::string::npos) << "the speedup over the reference";
  EXPECT_NE(page.find("0.80x"), std::string::npos) << "over the library";
  EXPECT_NE(page.find("50%"), std::string::npos) << "of the roofline";
  EXPECT_NE(page.find("reference 4.000 ms"), std::string::npos) << "the anchor on the curve";
  EXPECT_NE(page.find("id=\"a2\""), std::string::npos);
  EXPECT_EQ(count(page, "<circle"), 2 + 2) << "two nodes in the graph, two dots on the curve";
  // Nothing from the store becomes markup, and nothing is fetched.
  EXPECT_EQ(page.find("<script"), std::string::npos);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<norm>"), std::string::npos);
  EXPECT_EQ(count(page, "http"), count(page, "http://www.w3.org/2000/svg") + 1)
      << "the SVG namespace, and the http-equiv of the policy that forbids fetching";
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
}

TEST_F(ReportFromStore, AnUnknownRunIsAnError) {
  EXPECT_FALSE(load_report(store, "r-nope"));
}

}  // namespace
}  // namespace kf::report
