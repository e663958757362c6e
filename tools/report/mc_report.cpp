#include "tools/report/mc_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <limits>
#include <locale>
#include <numbers>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "quasistep/batch/sampling.hpp"
#include "quasistep/core/kinematics.hpp"
#include "quasistep/core/stepper.hpp"

namespace qs::io {
namespace {

// The only address in the document: the SVG namespace, which browsers never fetch.
constexpr const char* kSvgOpen = "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\"";

constexpr const char* kStyle =
    "body{font-family:system-ui,sans-serif;max-width:60em;margin:1.5em auto;padding:0 1em;color:#222}\n"
    "table{border-collapse:collapse;margin:0.5em 0}\n"
    "th,td{border:1px solid #ccc;padding:0.25em 0.6em;text-align:left;vertical-align:top}\n"
    "th{background:#f3f3f3;font-weight:600}\n"
    "code{font-family:ui-monospace,monospace}\n"
    "svg[role=img]{display:block;margin:0.5em 0 1.5em;max-width:100%;height:auto}\n"
    "svg[role=img] text{font-family:system-ui,sans-serif;font-size:11px;fill:#222}\n"
    ".note{color:#555}\n"
    ".replay-box{max-width:680px}\n";

std::string escape(std::string_view s) { return html_escape(s); }

/// The classic locale: a global locale with ',' decimals must not reach SVG numbers.
std::ostringstream number_stream() {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  return s;
}

/// A number in a label: 4 significant digits; a non-finite value is said in words so that
/// "nan"/"inf" never appear in the document.
std::string num(double v) {
  if (!std::isfinite(v)) return "n/a";
  if (v == 0) v = 0;  // no "-0"
  std::ostringstream s = number_stream();
  s << std::setprecision(4) << v;
  return s.str();
}

/// An SVG coordinate or length. Callers guard their divisions; this is the last line of
/// defence: a non-finite value becomes 0 and a huge one is clamped, so that no attribute is
/// ever NaN or inf or a 300-digit string.
std::string px(double v) {
  if (!std::isfinite(v)) v = 0;
  v = std::clamp(v, -1e6, 1e6);
  std::ostringstream s = number_stream();
  s << std::fixed << std::setprecision(1) << v;
  return s.str();
}

/// A fraction as a percentage with 1 decimal, e.g. "62.5%".
std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  std::ostringstream s = number_stream();
  s << std::fixed << std::setprecision(1) << 100.0 * fraction << "%";
  return s.str();
}

/// One colour per outcome kind, shared by the histogram and the trajectories; success green.
const char* colour(Outcome o) {
  switch (o) {
    case Outcome::held:
    case Outcome::in_goal: return "#2e7d32";
    case Outcome::slipped:
    case Outcome::missed: return "#ef6c00";
    case Outcome::never_touched: return "#1e88e5";
    case Outcome::solver_failed: return "#c62828";
  }
  return "#757575";
}

/// The count of an outcome, 0 for an index outside the array (a corrupt enum value).
long count_of(const McSummary& s, Outcome o) {
  const int i = static_cast<int>(o);
  return i >= 0 && i < kOutcomeCount ? std::max(0L, s.outcome_count[static_cast<std::size_t>(i)]) : 0;
}

std::string distribution_text(const Distribution& d) {
  switch (d.kind) {
    case Distribution::Kind::uniform: return "uniform " + num(d.low) + " .. " + num(d.high);
    case Distribution::Kind::normal: return "normal mean " + num(d.mean) + ", stddev " + num(d.stddev);
    case Distribution::Kind::truncated_normal:
      return "truncated_normal mean " + num(d.mean) + ", stddev " + num(d.stddev) + " on [" + num(d.low) + ", " +
             num(d.high) + "]";
  }
  return "unknown";
}

void row(std::ostream& out, std::string_view key, const std::string& escaped_value) {
  out << "<tr><th>" << key << "</th><td>" << escaped_value << "</td></tr>\n";
}

void write_head(std::ostream& out, const std::string& title) {
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      << "<title>" << escape(title) << "</title>\n<style>\n" << kStyle << "</style>\n";
  write_replay_style_and_script(out);
  out << "</head>\n<body>\n<h1>" << escape(title) << "</h1>\n";
}

void write_study(std::ostream& out, const McReportInput& in) {
  const McStudy& st = *in.study;
  out << "<h2>Study</h2>\n<table id=\"study\">\n";
  if (!in.version.empty()) row(out, "quasistep", escape(in.version));
  if (!in.date.empty()) row(out, "date", escape(in.date));
  if (!in.command_line.empty()) row(out, "command", "<code>" + escape(in.command_line) + "</code>");
  if (!in.scene_path.empty()) row(out, "scene", "<code>" + escape(in.scene_path) + "</code>");
  if (!in.description.empty()) row(out, "description", escape(in.description));
  row(out, "model", escape(st.model));
  row(out, "scene hash", "<code>" + escape(st.scene_hash) + "</code>");
  row(out, "seed", std::to_string(st.seed));
  row(out, "samples N", std::to_string(st.samples));
  row(out, "shards M", std::to_string(st.shards));
  row(out, "success", escape(st.success));
  if (!st.object.empty()) row(out, "object", escape(st.object));
  out << "<tr><th colspan=\"2\">uncertain parameters</th></tr>\n";
  if (st.parameters.empty()) out << "<tr><td colspan=\"2\">none</td></tr>\n";
  for (std::size_t p = 0; p < st.parameters.size(); ++p) {
    // A study from a malformed source may lack a distribution: say so rather than read past.
    const std::string d = p < st.distributions.size() ? distribution_text(st.distributions[p]) : "unknown";
    const std::string unit = parameter_unit(st.parameters[p]);
    out << "<tr><td><code>" << escape(st.parameters[p]) << "</code></td><td>" << d;
    if (!unit.empty()) out << " " << escape(unit);
    out << "</td></tr>\n";
  }
  out << "</table>\n";
}

void write_result(std::ostream& out, const McSummary& s) {
  out << "<h2>Result</h2>\n<p id=\"success-rate\">Success rate <strong>" << percent(s.rate) << "</strong> (" << s.successes << "/"
      << s.samples << " samples), Wilson 95% interval " << percent(s.wilson_low) << " to " << percent(s.wilson_high)
      << ".</p>\n";
  if (s.samples <= 0) out << "<p class=\"note\">No samples were summarized.</p>\n";
}

// ---- Charts with axes -------------------------------------------------------------------

/// Round tick positions covering [lo, hi]: steps of 1, 2 or 5 times a power of ten.
std::vector<double> ticks(double lo, double hi, int target = 5) {
  std::vector<double> out;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return {lo};
  const double raw = (hi - lo) / target, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  for (double v = std::ceil(lo / step) * step; v <= hi + 1e-9 * step; v += step)
    out.push_back(std::abs(v) < 1e-9 * step ? 0.0 : v);
  return out;
}

/// A plot area with a data range on each axis; data to SVG pixels (y up).
struct Chart {
  double left = 70, top = 14, width = 520, height = 240;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  double X(double x) const { return left + width * (x - x0) / (x1 - x0); }
  double Y(double y) const { return top + height * (1 - (y - y0) / (y1 - y0)); }
  double svg_w() const { return left + width + 24; }
  double svg_h() const { return top + height + 46; }
};

/// A range for values [lo, hi] with a margin; a zero width is widened so that the axis has
/// a scale.
std::pair<double, double> padded_range(double lo, double hi, double pad = 0.05) {
  if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi) return {0.0, 1.0};
  if (hi - lo < 1e-12 * std::max(1.0, std::abs(hi))) {
    const double d = std::max(1e-3, 0.1 * std::abs(hi));
    return {lo - d, hi + d};
  }
  const double m = pad * (hi - lo);
  return {lo - m, hi + m};
}

void open_chart(std::ostream& out, const Chart& c, const std::string& kind, const std::string& label) {
  out << kSvgOpen << " width=\"" << px(c.svg_w()) << "\" height=\"" << px(c.svg_h()) << "\" viewBox=\"0 0 "
      << px(c.svg_w()) << " " << px(c.svg_h()) << "\" data-plot=\"" << kind << "\" aria-label=\"" << escape(label)
      << "\">\n";
}

/// The frame, the ticks with their numbers and the two axis labels (with units).
void write_axes(std::ostream& out, const Chart& c, const std::string& x_label, const std::string& y_label) {
  out << "<rect x=\"" << px(c.left) << "\" y=\"" << px(c.top) << "\" width=\"" << px(c.width) << "\" height=\""
      << px(c.height) << "\" fill=\"#fcfcfc\" stroke=\"#888\"/>\n";
  for (double v : ticks(c.x0, c.x1)) {
    const double x = c.X(v);
    out << "<line x1=\"" << px(x) << "\" y1=\"" << px(c.top + c.height) << "\" x2=\"" << px(x) << "\" y2=\""
        << px(c.top + c.height + 4) << "\" stroke=\"#444\"/><text x=\"" << px(x) << "\" y=\""
        << px(c.top + c.height + 16) << "\" text-anchor=\"middle\">" << num(v) << "</text>\n";
  }
  for (double v : ticks(c.y0, c.y1)) {
    const double y = c.Y(v);
    out << "<line x1=\"" << px(c.left - 4) << "\" y1=\"" << px(y) << "\" x2=\"" << px(c.left) << "\" y2=\"" << px(y)
        << "\" stroke=\"#444\"/><text x=\"" << px(c.left - 6) << "\" y=\"" << px(y + 4) << "\" text-anchor=\"end\">"
        << num(v) << "</text>\n";
  }
  out << "<text x=\"" << px(c.left + c.width / 2) << "\" y=\"" << px(c.top + c.height + 36)
      << "\" text-anchor=\"middle\">" << escape(x_label) << "</text>\n"
      << "<text x=\"14\" y=\"" << px(c.top + c.height / 2) << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      << px(c.top + c.height / 2) << ")\">" << escape(y_label) << "</text>\n";
}

std::string with_unit(const std::string& name, const std::string& unit) {
  std::string out = name;  // appended, not name + ...: GCC 12 warns falsely (-Wrestrict, bug 105329)
  if (!unit.empty()) out.append(" (").append(unit).append(")");
  return out;
}

void outcome_legend(std::ostream& out, const McStudy& st) {
  out << "<p class=\"note\">";
  for (Outcome o : outcomes_of(st.success_kind))
    out << "<span style=\"color:" << colour(o) << "\">&#9679;</span> " << escape(to_string(o)) << " &nbsp; ";
  out << "</p>\n";
}

// ---- The scene and replays -----------------------------------------------------------------

void write_scene_and_replays(std::ostream& out, const McReportInput& in) {
  out << "<h2>The scene</h2>\n";
  if (!in.scene) {
    out << "<p class=\"note\">"
        << escape(in.no_replays.empty() ? "No scene was given: the report has no picture of it and no replays."
                                        : in.no_replays)
        << "</p>\n";
    return;
  }
  const Scene& scene = *in.scene;
  out << "<div class=\"replay-box\" data-replay=\"scene\"></div>\n<script type=\"application/json\" "
         "class=\"qs-replay-data\">"
      << replay_data_json(scene, initial_replay(*scene.model)) << "</script>\n";
  out << "<h2>Replays</h2>\n";
  if (in.replays.empty()) {
    out << "<p class=\"note\">" << escape(in.no_replays.empty() ? "No sample was replayed." : in.no_replays) << "</p>\n";
    return;
  }
  out << "<p class=\"note\">A few samples of each outcome, run again one at a time from their sampled values "
         "(bitwise the study's runs), with each step's contact impulses; each is drawn with its own values "
         "(sizes, poses of fixed bodies, friction cones).</p>\n";
  const McStudy& st = *in.study;
  for (const McReplay& r : in.replays) {
    out << "<h3>sample " << r.sample << ": <span style=\"color:" << colour(r.outcome) << "\">"
        << escape(to_string(r.outcome)) << "</span></h3>\n<p class=\"note\">";
    for (std::size_t p = 0; p < r.values.size() && p < st.parameters.size(); ++p)
      out << (p ? ", " : "") << "<code>" << escape(st.parameters[p]) << "</code> = " << num(r.values[p]) << " "
          << escape(parameter_unit(st.parameters[p]));
    out << "</p>\n<div class=\"replay-box\" data-replay=\"" << r.sample << "\"></div>\n"
        << "<script type=\"application/json\" class=\"qs-replay-data\">" << replay_data_json(scene, r.replay)
        << "</script>\n";
  }
}

// ---- The success quantity over time -----------------------------------------------------------

void write_success_over_time(std::ostream& out, const McReportInput& in) {
  if (in.replays.empty() || !in.success) return;
  const SuccessCriterion& cr = *in.success;
  const bool lifted = cr.kind == SuccessCriterion::Kind::lifted;
  out << "<h2>" << (lifted ? "Lift over time" : "Distance to the goal over time") << "</h2>\n";
  // Each replay's quantity per row: the rise above the start (lifted), or the goal distance
  // of the criterion: the largest of |x - x_goal| / tol_x, |y - y_goal| / tol_y and
  // |theta - theta_goal| / tol_theta (theta modulo 2 pi), at most 1 inside the goal region.
  const auto goal_distance = [&cr](const std::array<double, 3>& p) {
    double d = 0;
    for (int k = 0; k < 3; ++k) {
      double e = p[static_cast<std::size_t>(k)] - cr.center[static_cast<std::size_t>(k)];
      if (k == 2) e = std::remainder(e, 2 * std::numbers::pi);
      d = std::max(d, std::abs(e) / cr.tolerance[static_cast<std::size_t>(k)]);
    }
    return d;
  };
  std::vector<std::vector<std::pair<double, double>>> series;
  double t1 = 0, lo = 0, hi = lifted ? cr.height : 1.0;
  for (const McReplay& r : in.replays) {
    std::vector<std::pair<double, double>> s;
    for (std::size_t k = 0; k < r.object.size() && k < r.replay.t.size(); ++k) {
      const auto& p = r.object[k];
      const double v = lifted ? p[1] - r.object[0][1] : goal_distance(p);
      if (!std::isfinite(v)) continue;
      s.emplace_back(r.replay.t[k], v);
      t1 = std::max(t1, r.replay.t[k]);
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    series.push_back(std::move(s));
  }
  if (lifted) t1 = std::max(t1, cr.hold_until);
  Chart c;
  c.x0 = 0;
  c.x1 = t1 > 0 ? t1 : 1;
  std::tie(c.y0, c.y1) = padded_range(lo, hi);
  open_chart(out, c, "success-over-time", lifted ? "lift of the object over time" : "distance to the goal over time");
  write_axes(out, c, "t (s)",
             lifted ? "rise of " + in.study->object + " (m)" : "goal distance of " + in.study->object + " (tolerances)");
  if (lifted) {
    // The criterion: at least `height` from when it is reached until hold_until.
    out << "<line x1=\"" << px(c.left) << "\" y1=\"" << px(c.Y(cr.height)) << "\" x2=\"" << px(c.left + c.width)
        << "\" y2=\"" << px(c.Y(cr.height)) << "\" stroke=\"#2e7d32\" stroke-dasharray=\"6 4\" data-mark=\"threshold\"/>\n"
        << "<text x=\"" << px(c.left + 4) << "\" y=\"" << px(c.Y(cr.height) - 4) << "\">" << num(cr.height)
        << " m</text>\n"
        << "<line x1=\"" << px(c.X(cr.hold_until)) << "\" y1=\"" << px(c.top) << "\" x2=\"" << px(c.X(cr.hold_until))
        << "\" y2=\"" << px(c.top + c.height) << "\" stroke=\"#555\" stroke-dasharray=\"2 3\" data-mark=\"hold\"/>\n"
        << "<text x=\"" << px(c.X(cr.hold_until) - 4) << "\" y=\"" << px(c.top + 12)
        << "\" text-anchor=\"end\">held until " << num(cr.hold_until) << " s</text>\n";
  } else {
    // Inside the goal region: every coordinate within its tolerance (goal distance <= 1).
    out << "<rect x=\"" << px(c.left) << "\" y=\"" << px(c.Y(std::min(1.0, c.y1))) << "\" width=\"" << px(c.width)
        << "\" height=\"" << px(std::max(0.0, c.Y(std::max(0.0, c.y0)) - c.Y(std::min(1.0, c.y1))))
        << "\" fill=\"#2e7d32\" fill-opacity=\"0.12\" data-mark=\"goal\"/>\n"
        << "<text x=\"" << px(c.left + 4) << "\" y=\"" << px(c.Y(std::min(1.0, c.y1)) - 4)
        << "\">in the goal region: x, y and theta within tolerance [" << num(cr.tolerance[0]) << " m, "
        << num(cr.tolerance[1]) << " m, " << num(cr.tolerance[2]) << " rad]</text>\n";
  }
  for (std::size_t i = 0; i < series.size(); ++i) {
    out << "<g data-series=\"" << in.replays[i].sample << "\"><title>sample " << in.replays[i].sample << ": "
        << escape(to_string(in.replays[i].outcome)) << "</title><polyline fill=\"none\" stroke=\""
        << colour(in.replays[i].outcome) << "\" stroke-width=\"2\" points=\"";
    for (const auto& [t, v] : series[i]) out << px(c.X(t)) << "," << px(c.Y(v)) << " ";
    out << "\"/></g>\n";
  }
  out << "</svg>\n";
  outcome_legend(out, *in.study);
}

// ---- Two parameters against each other ----------------------------------------------------------

void write_scatter(std::ostream& out, const McReportInput& in) {
  const McStudy& st = *in.study;
  if (!in.records) return;
  if (st.parameters.size() < 2) {
    out << "<h2>Outcome by parameter</h2>\n<p class=\"note\">The study has one uncertain parameter: its success "
           "per bin is below.</p>\n";
    return;
  }
  const McRecords& r = *in.records;
  const int a = in.axes[0], b = in.axes[1], np = r.parameter_count;
  if (a < 0 || b < 0 || a >= np || b >= np) return;
  out << "<h2>Outcome by <code>" << escape(st.parameters[static_cast<std::size_t>(a)]) << "</code> and <code>"
      << escape(st.parameters[static_cast<std::size_t>(b)]) << "</code></h2>\n";
  double xa = std::numeric_limits<double>::infinity(), xb = -xa, ya = xa, yb = -xa;
  for (long i = 0; i < r.size(); ++i) {
    const double x = r.values[static_cast<std::size_t>(i * np + a)], y = r.values[static_cast<std::size_t>(i * np + b)];
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    xa = std::min(xa, x), xb = std::max(xb, x), ya = std::min(ya, y), yb = std::max(yb, y);
  }
  Chart c;
  c.height = 320;
  std::tie(c.x0, c.x1) = padded_range(xa, xb);
  std::tie(c.y0, c.y1) = padded_range(ya, yb);
  const std::string& pa = st.parameters[static_cast<std::size_t>(a)], &pb = st.parameters[static_cast<std::size_t>(b)];
  open_chart(out, c, "scatter", "outcome of each sample by two parameters");
  write_axes(out, c, with_unit(pa, parameter_unit(pa)), with_unit(pb, parameter_unit(pb)));
  // Successes last, so that they are not hidden under the failures.
  for (int pass = 0; pass < 2; ++pass)
    for (long i = 0; i < r.size(); ++i) {
      const Outcome o = r.outcome[static_cast<std::size_t>(i)];
      if (is_success(o) != (pass == 1)) continue;
      const double x = r.values[static_cast<std::size_t>(i * np + a)], y = r.values[static_cast<std::size_t>(i * np + b)];
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      out << "<circle cx=\"" << px(c.X(x)) << "\" cy=\"" << px(c.Y(y)) << "\" r=\"2.5\" fill=\"" << colour(o)
          << "\" fill-opacity=\"0.7\"/>";
    }
  out << "\n</svg>\n";
  outcome_legend(out, st);
  if (r.size() < in.records_of)
    out << "<p class=\"note\">The first " << r.size() << " of " << in.records_of << " samples.</p>\n";
}

bool finite_point(const std::array<double, 3>& q) { return std::isfinite(q[0]) && std::isfinite(q[1]); }

// ---- The object's path -------------------------------------------------------------------------

void write_trajectories(std::ostream& out, const McReportInput& in) {
  out << "<h2>The object's path</h2>\n";
  const std::vector<McTrajectory> none;
  const std::vector<McTrajectory>& ts = in.trajectories ? *in.trajectories : none;
  if (ts.empty()) {
    out << "<p class=\"note\">Paths are not available for this report (merged shard CSVs do not carry them).</p>\n";
    return;
  }
  double xa = std::numeric_limits<double>::infinity(), xb = -xa, ya = xa, yb = -xa;
  for (const McTrajectory& t : ts)
    for (const auto& q : t.pose)
      if (finite_point(q)) xa = std::min(xa, q[0]), xb = std::max(xb, q[0]), ya = std::min(ya, q[1]), yb = std::max(yb, q[1]);
  const bool goal = in.success && in.success->kind == SuccessCriterion::Kind::goal_region;
  if (goal) {
    const auto& cr = *in.success;
    xa = std::min(xa, cr.center[0] - cr.tolerance[0]), xb = std::max(xb, cr.center[0] + cr.tolerance[0]);
    ya = std::min(ya, cr.center[1] - cr.tolerance[1]), yb = std::max(yb, cr.center[1] + cr.tolerance[1]);
  }
  Chart c;
  c.height = 300;
  std::tie(c.x0, c.x1) = padded_range(xa, xb);
  std::tie(c.y0, c.y1) = padded_range(ya, yb);
  open_chart(out, c, "paths", "the object's path in the plane");
  const std::string object = in.study->object.empty() ? "object" : in.study->object;
  write_axes(out, c, object + " x (m)", object + " y (m)");
  if (goal) {
    const auto& cr = *in.success;
    out << "<rect x=\"" << px(c.X(cr.center[0] - cr.tolerance[0])) << "\" y=\"" << px(c.Y(cr.center[1] + cr.tolerance[1]))
        << "\" width=\"" << px(c.X(cr.center[0] + cr.tolerance[0]) - c.X(cr.center[0] - cr.tolerance[0]))
        << "\" height=\"" << px(c.Y(cr.center[1] - cr.tolerance[1]) - c.Y(cr.center[1] + cr.tolerance[1]))
        << "\" fill=\"#2e7d32\" fill-opacity=\"0.15\" stroke=\"#2e7d32\" data-mark=\"goal\"><title>the goal region"
           "</title></rect>\n";
  }
  for (const McTrajectory& t : ts) {
    out << "<g data-path=\"" << t.sample << "\"><title>sample " << t.sample << ": " << escape(to_string(t.outcome))
        << "</title><polyline fill=\"none\" stroke=\"" << colour(t.outcome) << "\" stroke-width=\"2\" points=\"";
    const std::array<double, 3>* first = nullptr;
    for (const auto& q : t.pose) {
      if (!finite_point(q)) continue;
      if (!first) first = &q;
      out << px(c.X(q[0])) << "," << px(c.Y(q[1])) << " ";
    }
    out << "\"/>";
    if (first)
      out << "<circle cx=\"" << px(c.X((*first)[0])) << "\" cy=\"" << px(c.Y((*first)[1])) << "\" r=\"3.5\" fill=\""
          << colour(t.outcome) << "\" stroke=\"#000\"/>";
    out << "</g>\n";
  }
  out << "</svg>\n<p class=\"note\">The object's position after each step for the first " << ts.size()
      << " samples (the dot marks the start); x and y have their own scales.</p>\n";
  outcome_legend(out, *in.study);
}

// ---- The page's script ---------------------------------------------------------------------------

void write_script(std::ostream& out) {
  // Draws each replay into the box before its data; #selftest (the test suite) writes what
  // the page holds into <pre id="qs-selftest">.
  out << "<pre id=\"qs-selftest\" hidden></pre>\n<script>\n\"use strict\";\n(function () {\n"
         "  var errors = [];\n"
         "  window.addEventListener(\"error\", function (e) { errors.push(String(e.message || e)); });\n"
         "  var replays = [];\n"
         "  document.querySelectorAll(\"script.qs-replay-data\").forEach(function (s) {\n"
         "    try { replays.push(qsReplay(s.previousElementSibling, JSON.parse(s.textContent), { width: 640 })); }\n"
         "    catch (e) { errors.push(String(e)); }\n"
         "  });\n"
         "  if (location.hash === \"#selftest\") {\n"
         "    var count = function (q) { return document.querySelectorAll(q).length; };\n"
         "    var report = { errors: errors, replays: replays.length,\n"
         "      replay_frames: replays.map(function (r) { return r.frames; }),\n"
         "      replay_reports: replays.map(function (r) { return r.selftest(); }),\n"
         "      scatter_points: count('svg[data-plot=\"scatter\"] circle'),\n"
         "      series: count('svg[data-plot=\"success-over-time\"] [data-series]'),\n"
         "      marks: count('svg[data-plot=\"success-over-time\"] [data-mark]'),\n"
         "      paths: count('svg[data-plot=\"paths\"] [data-path]'),\n"
         "      goal_marks: count('[data-mark=\"goal\"]'),\n"
         "      bin_bars: count('svg[data-plot=\"bins\"] [data-bin]'),\n"
         "      bin_intervals: count('svg[data-plot=\"bins\"] [data-interval]'),\n"
         "      plots_without_ticks: Array.prototype.filter.call(document.querySelectorAll(\"svg[data-plot]\"),\n"
         "        function (s) { return s.querySelectorAll(\"text\").length < 4; }).length };\n"
         "    var rate = document.getElementById(\"success-rate\"), prov = document.getElementById(\"study\");\n"
         "    report.rate_before_provenance = !!(rate && prov && (rate.compareDocumentPosition(prov) & Node.DOCUMENT_POSITION_FOLLOWING));\n"
         "    report.rate_bottom = rate ? rate.getBoundingClientRect().bottom + window.scrollY : -1;\n"
         "    report.viewport_height = window.innerHeight;\n"
         "    document.getElementById(\"qs-selftest\").textContent = JSON.stringify(report);\n"
         "  }\n"
         "})();\n</script>\n";
}

// ---- Outcome histogram ------------------------------------------------------------------

void write_histogram(std::ostream& out, const McStudy& st, const McSummary& s) {
  const std::array<Outcome, 4> outcomes = outcomes_of(st.success_kind);
  long most = 1;  // at least 1: all-zero counts draw empty bars, not 0/0
  for (const Outcome o : outcomes) most = std::max(most, count_of(s, o));
  const double w = 520, h = 240, top = 24, bottom = 36, side = 20;
  const double plot_h = h - top - bottom, slot = (w - 2 * side) / 4, bar = 0.6 * slot, base = top + plot_h;
  out << "<h2>Outcomes</h2>\n"
      << kSvgOpen << " width=\"" << px(w) << "\" height=\"" << px(h) << "\" viewBox=\"0 0 " << px(w) << " "
      << px(h) << "\" aria-label=\"outcome histogram\">\n";
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome o = outcomes[i];
    const long c = count_of(s, o);
    const double bh = plot_h * static_cast<double>(c) / static_cast<double>(most);
    const double x = side + slot * static_cast<double>(i), cx = x + slot / 2;
    const std::string name = escape(to_string(o));
    out << "<g><title>" << name << ": " << c << "</title><rect x=\"" << px(x + (slot - bar) / 2) << "\" y=\""
        << px(base - bh) << "\" width=\"" << px(bar) << "\" height=\"" << px(bh) << "\" fill=\"" << colour(o)
        << "\"/></g>\n"
        << "<text x=\"" << px(cx) << "\" y=\"" << px(base - bh - 6) << "\" text-anchor=\"middle\">" << c << "</text>\n"
        << "<text x=\"" << px(cx) << "\" y=\"" << px(base + 18) << "\" text-anchor=\"middle\">" << name
        << "</text>\n";
  }
  out << "<line x1=\"" << px(side) << "\" y1=\"" << px(base) << "\" x2=\"" << px(w - side) << "\" y2=\"" << px(base)
      << "\" stroke=\"#444\"/>\n</svg>\n";
}

// ---- Success per parameter bin ----------------------------------------------------------

/// The plot area of a bin chart, in SVG pixels.
struct Plot {
  double left, top, width, height;
  double bottom() const { return top + height; }
};

/// 45-degree hatching inside a rectangle, drawn as line segments: a pattern fill would need
/// url(#id), which the report avoids (ids collide when reports are pasted together).
void write_hatch(std::ostream& out, double x, double y, double w, double h) {
  constexpr double step = 8;
  out << "<g stroke=\"#bbb\" stroke-width=\"1\">";
  for (double t = step - h; t < w; t += step) {
    // The line from (x + t, y + h) up-right at 45 degrees, clipped to [x, x + w].
    const double t0 = std::max(t, 0.0), t1 = std::min(t + h, w);
    out << "<line x1=\"" << px(x + t0) << "\" y1=\"" << px(y + h - (t0 - t)) << "\" x2=\"" << px(x + t1)
        << "\" y2=\"" << px(y + h - (t1 - t)) << "\"/>";
  }
  out << "</g>\n";
}

void write_rate_axis(std::ostream& out, const Plot& p) {
  for (int k = 0; k <= 4; ++k) {
    const double y = p.bottom() - p.height * k / 4.0;
    out << "<line x1=\"" << px(p.left) << "\" y1=\"" << px(y) << "\" x2=\"" << px(p.left + p.width) << "\" y2=\""
        << px(y) << "\" stroke=\"" << (k == 0 ? "#444" : "#e3e3e3") << "\"/>\n"
        << "<text x=\"" << px(p.left - 6) << "\" y=\"" << px(y + 4) << "\" text-anchor=\"end\">" << 25 * k
        << "%</text>\n";
  }
}

/// Bin i's edges: equal widths over [low, high]; a zero-width range gives equal edges.
double edge(const ParameterBins& b, std::size_t i, std::size_t n) {
  const double e = b.low + (b.high - b.low) * static_cast<double>(i) / static_cast<double>(n);
  // A rounding residue of an edge at zero would print as e.g. "3.469e-18": show 0.
  return std::abs(e) < 1e-9 * std::abs(b.high - b.low) ? 0.0 : e;
}

void write_bin_bar(std::ostream& out, const Plot& p, const ParameterBins& b, std::size_t i, std::size_t n) {
  const double bw = p.width / static_cast<double>(n), x = p.left + bw * static_cast<double>(i), pad = 0.1 * bw;
  const long c = std::max(0L, b.count[i]), k = std::clamp(b.successes[i], 0L, c);
  // Appended, not "[" + ...: GCC 12 warns falsely (-Wrestrict, bug 105329) on that form.
  std::string range = "[";
  range.append(num(edge(b, i, n))).append(", ").append(num(edge(b, i + 1, n))).append("]");
  if (c == 0) {
    // No samples is not a 0% success rate: hatched, outlined, and said in words.
    write_hatch(out, x + pad, p.top, bw - 2 * pad, p.height);
    out << "<g data-bin=\"" << i << "\"><title>" << range << ": no samples</title><rect x=\"" << px(x + pad) << "\" y=\"" << px(p.top)
        << "\" width=\"" << px(bw - 2 * pad) << "\" height=\"" << px(p.height)
        << "\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"4 3\"/></g>\n"
        << "<text x=\"" << px(x + bw / 2) << "\" y=\"" << px(p.top + p.height / 2) << "\" text-anchor=\"middle\" "
        << "transform=\"rotate(-90 " << px(x + bw / 2) << " " << px(p.top + p.height / 2) << ")\">no samples</text>\n";
  } else {
    const double rate = static_cast<double>(k) / static_cast<double>(c), bh = p.height * rate;
    const auto [lo, hi] = wilson_interval(k, c);
    out << "<g data-bin=\"" << i << "\"><title>" << range << ": " << k << " of " << c << " succeeded (" << percent(rate)
        << "; 95% interval " << percent(lo) << " to " << percent(hi) << ")</title><rect x=\"" << px(x + pad) << "\" y=\""
        << px(p.bottom() - bh) << "\" width=\"" << px(bw - 2 * pad) << "\" height=\"" << px(bh) << "\" fill=\""
        << colour(Outcome::held) << "\" fill-opacity=\"0.8\"/></g>\n";
    // The bin's Wilson 95% interval: a bar with caps.
    const double cx = x + bw / 2, ylo = p.bottom() - p.height * lo, yhi = p.bottom() - p.height * hi;
    out << "<path data-interval=\"" << i << "\" d=\"M" << px(cx) << " " << px(ylo) << "V" << px(yhi) << "M"
        << px(cx - 5) << " " << px(ylo) << "H" << px(cx + 5) << "M" << px(cx - 5) << " " << px(yhi) << "H" << px(cx + 5)
        << "\" stroke=\"#222\" stroke-width=\"1.2\" fill=\"none\"/>\n";
  }
  out << "<text x=\"" << px(x + bw / 2) << "\" y=\"" << px(p.bottom() + 44) << "\" text-anchor=\"middle\">n=" << c
      << "</text>\n";
}

void write_edge_labels(std::ostream& out, const Plot& p, const ParameterBins& b, std::size_t n) {
  for (std::size_t i = 0; i <= n; ++i) {
    // Staggered in two rows so that long numbers of neighbouring edges do not overlap.
    const double x = p.left + p.width * static_cast<double>(i) / static_cast<double>(n);
    const double y = p.bottom() + (i % 2 == 0 ? 14 : 28);
    out << "<line x1=\"" << px(x) << "\" y1=\"" << px(p.bottom()) << "\" x2=\"" << px(x) << "\" y2=\""
        << px(p.bottom() + 4) << "\" stroke=\"#444\"/>\n"
        << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\" text-anchor=\"middle\">" << num(edge(b, i, n))
        << "</text>\n";
  }
}

void write_bins_chart(std::ostream& out, const ParameterBins& b) {
  const std::string path = escape(b.path);
  out << "<h3><code>" << path << "</code></h3>\n";
  const std::size_t n = std::min(b.count.size(), b.successes.size());
  if (n == 0) {
    out << "<p class=\"note\">No bins for this parameter.</p>\n";
    return;
  }
  const double w = 640, h = 290;
  const Plot p{56, 16, w - 56 - 24, h - 16 - 70};
  out << kSvgOpen << " width=\"" << px(w) << "\" height=\"" << px(h) << "\" viewBox=\"0 0 " << px(w) << " " << px(h)
      << "\" data-plot=\"bins\" aria-label=\"success rate per bin of " << path << "\">\n";
  write_rate_axis(out, p);
  for (std::size_t i = 0; i < n; ++i) write_bin_bar(out, p, b, i, n);
  write_edge_labels(out, p, b, n);
  const std::string unit = parameter_unit(b.path);
  out << "<text x=\"" << px(p.left + p.width / 2) << "\" y=\"" << px(h - 6) << "\" text-anchor=\"middle\">" << path
      << with_unit("", escape(unit)) << "</text>\n"
      << "<text x=\"14\" y=\"" << px(p.top + p.height / 2) << "\" text-anchor=\"middle\" transform=\"rotate(-90 14 "
      << px(p.top + p.height / 2) << ")\">success rate</text>\n</svg>\n";
  if (!(b.high > b.low))
    out << "<p class=\"note\">The range of this parameter has zero width: its bin edges are all equal.</p>\n";
}

void write_bins(std::ostream& out, const McSummary& s) {
  out << "<h2>Success per parameter</h2>\n";
  if (s.bins.empty()) out << "<p class=\"note\">No uncertain parameters.</p>\n";
  for (const ParameterBins& b : s.bins) write_bins_chart(out, b);
  if (!s.bins.empty())
    out << "<p class=\"note\">Success rate per bin of equal width, with its Wilson 95% interval; n is the number of "
           "samples in the bin. Normal parameters are binned over mean &plusmn; 3 stddev, values outside go to the "
           "end bins.</p>\n";
}

}  // namespace

std::string parameter_unit(const std::string& path) {
  const std::size_t dot = path.rfind('.');
  const std::string last = dot == std::string::npos ? path : path.substr(dot + 1);
  if (last == "x" || last == "y" || last == "position") return path.find(".pose.") != std::string::npos || last == "position" ? "m" : "";
  if (last == "theta") return "rad";
  if (last == "mass") return "kg";
  if (last == "stiffness" || last == "K" || last == "K_a") return "N/m";
  return "";  // friction, scale, gains: pure numbers
}

std::array<int, 2> parse_report_axes(const std::string& text, const McStudy& study) {
  const std::size_t comma = text.find(',');
  if (comma == std::string::npos) throw std::runtime_error("--report-axes " + text + ": expected A,B (two parameter paths)");
  std::array<int, 2> out{};
  const std::string parts[2] = {text.substr(0, comma), text.substr(comma + 1)};
  for (int k = 0; k < 2; ++k) {
    const std::string& p = parts[k];
    int found = -1;
    for (std::size_t i = 0; i < study.parameters.size(); ++i)
      if (study.parameters[i] == p) found = static_cast<int>(i);
    if (found < 0 && !p.empty() && p.find_first_not_of("0123456789") == std::string::npos && p.size() < 6) {
      const int i = std::stoi(p) - 1;
      if (i >= 0 && i < static_cast<int>(study.parameters.size())) found = i;
    }
    if (found < 0) {
      std::string known;
      for (const std::string& s : study.parameters) known += (known.empty() ? "" : ", ") + s;
      throw std::runtime_error("--report-axes: " + p + " is not an uncertain parameter of the study (" + known + ")");
    }
    out[static_cast<std::size_t>(k)] = found;
  }
  if (out[0] == out[1]) throw std::runtime_error("--report-axes: " + text + " names one parameter twice");
  return out;
}

std::vector<McReplay> replay_samples(const Scene& scene, const McStudy& study, const McRecords& records, int per_outcome) {
  const Model& m = *scene.model;
  std::vector<McReplay> out;
  if (!scene.success) return out;
  std::array<int, kOutcomeCount> taken{};
  const int object = scene.success->body;
  for (long i = 0; i < records.size(); ++i) {
    const Outcome o = records.outcome[static_cast<std::size_t>(i)];
    if (taken[static_cast<std::size_t>(o)] >= per_outcome) continue;
    ++taken[static_cast<std::size_t>(o)];
    McReplay r;
    r.sample = records.sample[static_cast<std::size_t>(i)];
    r.outcome = o;
    const int np = records.parameter_count;
    r.values.assign(records.values.begin() + i * np, records.values.begin() + (i + 1) * np);
    SampleWorld w = sample_world(scene, study.seed, r.sample);
    const auto stepper = make_stepper(m);
    ReplayInput& rp = r.replay;
    rp.frames_from = "sample " + std::to_string(r.sample);
    rp.has_forces = true;
    rp.scaled_by_k = stepper->impulses_scaled_by_k();
    rp.params = w.params;
    std::vector<Pose2<double>> pose(m.bodies.size()), frame(m.joints.size());
    const auto keep = [&](const State& s) {
      add_row(rp, s);
      forward_kinematics(m, w.params, s.q.data(), pose.data(), frame.data());
      const Pose2<double>& p = pose[static_cast<std::size_t>(object)];
      r.object.push_back({p.translation.x, p.translation.y, p.angle()});
    };
    State s = w.start;
    keep(s);
    for (int l = 1; l <= m.step.steps; ++l) {
      const Status st = stepper->step(m, w.params, s);
      if (st != Status::solved) {
        rp.stopped = "step " + std::to_string(l) + ": " + std::string(to_string(st));
        break;
      }
      add_impulses(rp, m, *stepper, l);
      keep(s);
    }
    out.push_back(std::move(r));
  }
  // Successes first, then the failures, each in sample order.
  std::stable_sort(out.begin(), out.end(), [](const McReplay& a, const McReplay& b) {
    return is_success(a.outcome) > is_success(b.outcome) ||
           (is_success(a.outcome) == is_success(b.outcome) && static_cast<int>(a.outcome) < static_cast<int>(b.outcome));
  });
  return out;
}

void write_mc_report(const McReportInput& in, std::ostream& out) {
  write_head(out, in.title.empty() ? std::string("Monte Carlo study") : in.title);
  // The answer first, then where it comes from: the rate and the outcomes above the study's
  // provenance, which fills a screen on its own.
  write_result(out, *in.summary);
  write_histogram(out, *in.study, *in.summary);
  write_study(out, in);
  write_scene_and_replays(out, in);
  write_success_over_time(out, in);
  write_scatter(out, in);
  write_bins(out, *in.summary);
  write_trajectories(out, in);
  write_script(out);
  out << "</body>\n</html>\n";
}

}  // namespace qs::io
