// The HTML report of a Monte Carlo study (tools/report/mc_report.hpp): one self-contained
// document (no network), input text escaped, the numbers it must show, and finite SVG for
// degenerate input (no samples, empty bins, zero-width ranges, paths that do not move).
// The report's replays and plots in a browser: tests/browser/test_mc_report.py.
#include "tools/report/mc_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/distributions.hpp"

namespace qs::mc_report_test {
namespace {

long occurrences(const std::string& s, const std::string& what) {
  long n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + what.size())) ++n;
  return n;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

using test::uniform;

McStudy grasp_study() {
  McStudy st;
  st.scene_hash = "0123456789abcdef";
  st.model = "anitescu";
  st.seed = 42;
  st.samples = 25;
  st.shards = 2;
  st.success = "lifted cylinder >= 0.02 m until 0.6 s";
  st.success_kind = SuccessCriterion::Kind::lifted;
  st.object = "cylinder";
  st.parameters = {"bodies.cylinder.mu", "bodies.cylinder.x"};
  Distribution n;
  n.kind = Distribution::Kind::normal;
  n.mean = 0.1;
  n.stddev = 0.01;
  st.distributions = {uniform(0.2, 0.8), n};
  return st;
}

ParameterBins bins(const std::string& path, double low, double high) {
  ParameterBins b;
  b.path = path;
  b.low = low;
  b.high = high;
  b.count.assign(kParameterBins, 3);
  b.successes.assign(kParameterBins, 2);
  return b;
}

McSummary grasp_summary() {
  McSummary s;
  s.samples = 25;
  s.successes = 17;
  s.rate = 0.68;
  s.wilson_low = 0.5;
  s.wilson_high = 0.8;
  s.outcome_count[static_cast<int>(Outcome::held)] = 17;
  s.outcome_count[static_cast<int>(Outcome::slipped)] = 5;
  s.outcome_count[static_cast<int>(Outcome::never_touched)] = 2;
  s.outcome_count[static_cast<int>(Outcome::solver_failed)] = 1;
  s.bins = {bins("bodies.cylinder.mu", 0.2, 0.8), bins("bodies.cylinder.x", 0.07, 0.13)};
  return s;
}

std::vector<McTrajectory> two_paths() {
  McTrajectory a{0, Outcome::held, {{0, 0, 0}, {0.01, 0.02, 0}, {0.01, 0.05, 0.1}}};
  McTrajectory b{1, Outcome::slipped, {{0.1, 0, 0}, {0.12, 0.01, 0}}};
  return {a, b};
}

std::string report(const McStudy& st, const McSummary& s, const std::vector<McTrajectory>& ts,
                   const std::string& title = "grasp study") {
  io::McReportInput in;
  in.study = &st;
  in.summary = &s;
  in.trajectories = &ts;
  in.title = title;
  std::ostringstream out;
  io::write_mc_report(in, out);
  return out.str();
}

/// The document without its <script> elements (the replay widget's code).
std::string without_scripts(std::string html) {
  for (std::size_t a = html.find("<script"); a != std::string::npos; a = html.find("<script", a)) {
    const std::size_t b = html.find("</script>", a);
    html.erase(a, b == std::string::npos ? std::string::npos : b + 9 - a);
  }
  return html;
}

/// The report's own charts (the widget's legend icons are small inline SVGs in its code).
long charts(const std::string& html) { return occurrences(without_scripts(html), "<svg"); }

/// The numbers of the first <polyline points="..."> as (x, y) pairs.
std::vector<std::pair<double, double>> first_polyline(const std::string& html) {
  const std::string key = "points=\"";
  const std::size_t at = html.find(key, html.find("<polyline"));
  std::istringstream in(html.substr(at + key.size(), html.find('"', at + key.size()) - at - key.size()));
  std::vector<std::pair<double, double>> pts;
  double x, y;
  char comma;
  while (in >> x >> comma >> y) pts.emplace_back(x, y);
  return pts;
}

TEST(McReport, IsOneHtmlDocument) {
  std::string html = report(grasp_study(), grasp_summary(), two_paths());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  while (!html.empty() && std::isspace(static_cast<unsigned char>(html.back()))) html.pop_back();
  ASSERT_GE(html.size(), 7u);
  EXPECT_EQ(html.substr(html.size() - 7), "</html>");
}

TEST(McReport, UsesNoNetwork) {
  const std::string html = report(grasp_study(), grasp_summary(), two_paths());
  const std::string ns = "http://www.w3.org/2000/svg";
  EXPECT_EQ(occurrences(html, "http://"), occurrences(html, ns));
  EXPECT_EQ(occurrences(html, "https://"), 0);
  // Scripts and styles are inline; nothing is loaded from anywhere.
  for (const char* bad : {"<script src", "<link", "url(", "<img", "@import", "<iframe", "fetch(", "xmlhttprequest"})
    EXPECT_EQ(occurrences(lower(html), bad), 0) << bad;
}

TEST(McReport, EscapesTextFromInput) {
  McStudy st = grasp_study();
  McSummary s = grasp_summary();
  st.parameters[0] = "bodies.<a&b>.mu";
  s.bins[0].path = st.parameters[0];
  st.success = "lifted \"box\" >= 0.02 m & 'held'";
  const std::string html = report(st, s, two_paths(), "<script>alert(1)</script>");
  EXPECT_EQ(html.find("<a&b>"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("bodies.&lt;a&amp;b&gt;.mu"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("lifted &quot;box&quot; &gt;= 0.02 m &amp; &#39;held&#39;"), std::string::npos);
}

TEST(McReport, ShowsTheStudy) {
  const std::string html = report(grasp_study(), grasp_summary(), two_paths());
  for (const char* text : {"anitescu", "0123456789abcdef", ">42<", ">25<", ">2<", "bodies.cylinder.mu",
                           "uniform 0.2 .. 0.8", "normal mean 0.1, stddev 0.01"})
    EXPECT_NE(html.find(text), std::string::npos) << text;
}

TEST(McReport, ShowsOutcomeCounts) {
  const std::string html = report(grasp_study(), grasp_summary(), two_paths());
  for (const char* text : {">17<", ">5<", ">2<", ">1<", ">held<", ">slipped<", ">never_touched<", ">solver_failed<"})
    EXPECT_NE(html.find(text), std::string::npos) << text;
  // A lifted study's histogram has no goal outcomes; a goal_region study's has them.
  EXPECT_EQ(html.find(">in_goal<"), std::string::npos);
  McStudy goal = grasp_study();
  goal.success_kind = SuccessCriterion::Kind::goal_region;
  const std::string g = report(goal, grasp_summary(), {});
  EXPECT_NE(g.find(">in_goal<"), std::string::npos);
  EXPECT_NE(g.find(">missed<"), std::string::npos);
}

TEST(McReport, ShowsRateAndWilsonInterval) {
  const std::string html = report(grasp_study(), grasp_summary(), two_paths());
  for (const char* text : {"68.0%", "50.0%", "80.0%", "17/25", "Wilson 95%"})
    EXPECT_NE(html.find(text), std::string::npos) << text;
}

TEST(McReport, DrawsOneChartPerParameter) {
  McSummary s = grasp_summary();
  s.bins.push_back(bins("bodies.finger.mu", 0.5, 1.0));
  const std::string html = report(grasp_study(), s, {});
  EXPECT_EQ(occurrences(html, "aria-label=\"success rate per bin of"), 3);
  // Histogram, three parameter charts, no trajectory drawing.
  EXPECT_EQ(charts(html), 4);
  // Edge labels of the first parameter's equal-width bins over [0.2, 0.8].
  for (const char* edge : {">0.2<", ">0.26<", ">0.5<", ">0.74<", ">0.8<"})
    EXPECT_NE(html.find(edge), std::string::npos) << edge;
}

TEST(McReport, EdgeAtZeroIsPrintedAsZero) {
  McSummary s = grasp_summary();
  s.bins = {bins("bodies.finger.y", -0.3, 0.1 * 3)};  // the middle edge is 5.55e-17 in doubles
  const std::string html = report(grasp_study(), s, {});
  EXPECT_NE(html.find(">0</text>"), std::string::npos);
  EXPECT_EQ(html.find("e-17"), std::string::npos);
}

TEST(McReport, EmptyBinSaysNoSamples) {
  McSummary s = grasp_summary();
  EXPECT_EQ(report(grasp_study(), s, {}).find("no samples"), std::string::npos);
  s.bins[1].count[4] = 0;
  s.bins[1].successes[4] = 0;
  const std::string html = report(grasp_study(), s, {});
  EXPECT_NE(html.find(">no samples</text>"), std::string::npos);
  EXPECT_NE(html.find(">n=0<"), std::string::npos);
}

TEST(McReport, NeverWritesNanOrInf) {
  // All zero: no samples, zero-width ranges, empty bins, no counts.
  McStudy st = grasp_study();
  st.samples = 0;
  McSummary zero;
  zero.wilson_high = 1;
  zero.bins = {bins("a", 0, 0), bins("b", 1, 1)};
  for (ParameterBins& b : zero.bins) {
    std::fill(b.count.begin(), b.count.end(), 0);
    std::fill(b.successes.begin(), b.successes.end(), 0);
  }
  const std::vector<McTrajectory> one_point{{3, Outcome::never_touched, {{0.5, 0.5, 0}}}};
  const std::vector<McTrajectory> still{{4, Outcome::held, {{1, 2, 0}, {1, 2, 0}, {1, 2, 0}}}};
  const std::vector<McTrajectory> vertical{{5, Outcome::held, {{1, 0, 0}, {1, 2, 0}}}};
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<McTrajectory> broken{{6, Outcome::solver_failed, {{0, 0, 0}, {nan, inf, 0}}}};
  const std::vector<McTrajectory> none_finite{{7, Outcome::solver_failed, {{nan, nan, nan}}}};
  McSummary odd = grasp_summary();
  odd.rate = nan;
  odd.bins[0].low = -inf;
  odd.bins[1].high = nan;
  for (const auto& [summary, ts] :
       std::vector<std::pair<McSummary, std::vector<McTrajectory>>>{{zero, one_point}, {zero, still}, {zero, vertical},
                                                                    {zero, broken}, {zero, none_finite}, {zero, {}},
                                                                    {odd, broken}}) {
    const std::string html = lower(without_scripts(report(st, summary, ts)));
    EXPECT_EQ(html.find("nan"), std::string::npos);
    EXPECT_EQ(html.find("inf"), std::string::npos);
    EXPECT_EQ(occurrences(html, "<svg"), occurrences(html, "</svg>"));
  }
}

TEST(McReport, SaysWhenTrajectoriesAreMissing) {
  EXPECT_NE(report(grasp_study(), grasp_summary(), {}).find("Paths are not available"), std::string::npos);
  EXPECT_EQ(report(grasp_study(), grasp_summary(), two_paths()).find("not available"), std::string::npos);
}

TEST(McReport, DrawsPathsOnAxesWithTicksAndYUp) {
  // 0.2 m right and 0.001 m up: each axis has its own scale (an equal scale would flatten
  // the path), up is a smaller SVG y, and both axes carry ticks and units.
  const std::vector<McTrajectory> ts{{9, Outcome::missed, {{0, 0, 0}, {0.2, 0.001, 0}}}};
  McStudy goal = grasp_study();
  goal.success_kind = SuccessCriterion::Kind::goal_region;
  const std::string html = report(goal, grasp_summary(), ts);
  const auto pts = first_polyline(html);
  ASSERT_EQ(pts.size(), 2u);
  const double across = pts[1].first - pts[0].first, up = pts[0].second - pts[1].second;
  EXPECT_GT(across, 100);
  EXPECT_GT(up, 100);
  EXPECT_NE(html.find("cylinder x (m)"), std::string::npos);
  EXPECT_NE(html.find("cylinder y (m)"), std::string::npos);
  EXPECT_NE(html.find(">0.001<"), std::string::npos);  // a tick of the y axis
  EXPECT_NE(html.find("sample 9: missed"), std::string::npos);
  EXPECT_NE(html.find("<circle"), std::string::npos);
  // Same colour for an outcome in the histogram and the path.
  EXPECT_GE(occurrences(html, "#ef6c00"), 3);  // histogram bar, path, legend
}

TEST(McReport, ClosesEverySvg) {
  for (const auto& ts : {two_paths(), std::vector<McTrajectory>{}}) {
    const std::string html = report(grasp_study(), grasp_summary(), ts);
    EXPECT_EQ(occurrences(html, "<svg"), occurrences(html, "</svg>"));
    EXPECT_EQ(charts(html), ts.empty() ? 3 : 4);
  }
}

}  // namespace
}  // namespace qs::mc_report_test
