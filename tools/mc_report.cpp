#include "tools/mc_report.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <limits>
#include <locale>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

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
    "svg{display:block;margin:0.5em 0 1.5em;max-width:100%;height:auto}\n"
    "svg text{font-family:system-ui,sans-serif;font-size:11px;fill:#222}\n"
    ".note{color:#555}\n";

std::string escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

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
      << "<title>" << escape(title) << "</title>\n<style>\n" << kStyle << "</style>\n</head>\n<body>\n"
      << "<h1>" << escape(title) << "</h1>\n";
}

void write_study(std::ostream& out, const McStudy& st) {
  out << "<h2>Study</h2>\n<table>\n";
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
    out << "<tr><td><code>" << escape(st.parameters[p]) << "</code></td><td>" << d << "</td></tr>\n";
  }
  out << "</table>\n";
}

void write_result(std::ostream& out, const McSummary& s) {
  out << "<h2>Result</h2>\n<p>Success rate <strong>" << percent(s.rate) << "</strong> (" << s.successes << "/"
      << s.samples << " samples), Wilson 95% interval " << percent(s.wilson_low) << " to " << percent(s.wilson_high)
      << ".</p>\n";
  if (s.samples <= 0) out << "<p class=\"note\">No samples were summarized.</p>\n";
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
    out << "<g><title>" << range << ": no samples</title><rect x=\"" << px(x + pad) << "\" y=\"" << px(p.top)
        << "\" width=\"" << px(bw - 2 * pad) << "\" height=\"" << px(p.height)
        << "\" fill=\"none\" stroke=\"#999\" stroke-dasharray=\"4 3\"/></g>\n"
        << "<text x=\"" << px(x + bw / 2) << "\" y=\"" << px(p.top + p.height / 2) << "\" text-anchor=\"middle\" "
        << "transform=\"rotate(-90 " << px(x + bw / 2) << " " << px(p.top + p.height / 2) << ")\">no samples</text>\n";
  } else {
    const double rate = static_cast<double>(k) / static_cast<double>(c), bh = p.height * rate;
    out << "<g><title>" << range << ": " << k << " of " << c << " succeeded (" << percent(rate) << ")</title><rect x=\""
        << px(x + pad) << "\" y=\"" << px(p.bottom() - bh) << "\" width=\"" << px(bw - 2 * pad) << "\" height=\""
        << px(bh) << "\" fill=\"" << colour(Outcome::held) << "\"/></g>\n";
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
      << "\" aria-label=\"success rate per bin of " << path << "\">\n";
  write_rate_axis(out, p);
  for (std::size_t i = 0; i < n; ++i) write_bin_bar(out, p, b, i, n);
  write_edge_labels(out, p, b, n);
  out << "<text x=\"" << px(p.left + p.width / 2) << "\" y=\"" << px(h - 6) << "\" text-anchor=\"middle\">" << path
      << "</text>\n</svg>\n";
  if (!(b.high > b.low))
    out << "<p class=\"note\">The range of this parameter has zero width: its bin edges are all equal.</p>\n";
}

void write_bins(std::ostream& out, const McSummary& s) {
  out << "<h2>Success per parameter</h2>\n";
  if (s.bins.empty()) out << "<p class=\"note\">No uncertain parameters.</p>\n";
  for (const ParameterBins& b : s.bins) write_bins_chart(out, b);
  if (!s.bins.empty())
    out << "<p class=\"note\">Success rate per bin of equal width; n is the number of samples in the bin. Normal "
           "parameters are binned over mean &plusmn; 3 stddev, values outside go to the end bins.</p>\n";
}

// ---- Trajectories -----------------------------------------------------------------------

struct Bounds {
  double x0 = 0, x1 = 0, y0 = 0, y1 = 0;
};

bool finite_point(const std::array<double, 3>& q) { return std::isfinite(q[0]) && std::isfinite(q[1]); }

/// The box of all finite points ({0, 0, 0, 0} when there is none).
Bounds bounds_of(const std::vector<McTrajectory>& ts) {
  constexpr double big = std::numeric_limits<double>::max();
  Bounds b{big, -big, big, -big};
  bool any = false;
  for (const McTrajectory& t : ts)
    for (const auto& q : t.pose)
      if (finite_point(q)) {
        any = true;
        b = {std::min(b.x0, q[0]), std::max(b.x1, q[0]), std::min(b.y0, q[1]), std::max(b.y1, q[1])};
      }
  return any ? b : Bounds{};
}

/// World (m) to SVG pixels: one scale for x and y (equal axes), y flipped (SVG y points
/// down), the drawing centred in a padded box at least `min_box` wide and high.
struct View {
  Bounds b;
  double scale = 1, box_w = 0, box_h = 0, ox = 0, oy = 0;
  double x(double wx) const { return ox + (wx - b.x0) * scale; }
  double y(double wy) const { return oy + (b.y1 - wy) * scale; }
};

View make_view(const Bounds& b, double max_box, double min_box, double margin) {
  View v;
  v.b = b;
  const double dx = b.x1 - b.x0, dy = b.y1 - b.y0, span = std::max(dx, dy);
  // A zero extent (one point, or a path that never moved) or an overflowing one has no
  // scale of its own: any finite scale draws it centred.
  v.scale = span > 0 && std::isfinite(span) && std::isfinite(max_box / span) ? max_box / span : 1.0;
  constexpr double pad = 10;  // keeps paths and start dots off the frame
  const double w = dx * v.scale, h = dy * v.scale;
  v.box_w = std::max(w, min_box) + 2 * pad;
  v.box_h = std::max(h, min_box) + 2 * pad;
  v.ox = margin + (v.box_w - w) / 2;
  v.oy = margin + (v.box_h - h) / 2;
  return v;
}

void write_path(std::ostream& out, const View& v, const McTrajectory& t) {
  const char* c = colour(t.outcome);
  const std::string label = "sample " + std::to_string(t.sample) + ": " + escape(to_string(t.outcome));
  out << "<g><title>" << label << "</title><polyline fill=\"none\" stroke=\"" << c
      << "\" stroke-width=\"2\" stroke-linejoin=\"round\" points=\"";
  const std::array<double, 3>* first = nullptr;
  for (const auto& q : t.pose) {
    if (!finite_point(q)) continue;  // a failed step may leave a non-finite pose: skip it
    if (!first) first = &q;
    out << px(v.x(q[0])) << "," << px(v.y(q[1])) << " ";
  }
  out << "\"/>";
  if (first)
    out << "<circle cx=\"" << px(v.x((*first)[0])) << "\" cy=\"" << px(v.y((*first)[1])) << "\" r=\"4\" fill=\"" << c
        << "\" stroke=\"#000\"/>";
  out << "</g>\n";
}

void write_legend(std::ostream& out, const std::vector<McTrajectory>& ts, double left, double top) {
  for (std::size_t i = 0; i < ts.size(); ++i) {
    const double y = top + 18 * static_cast<double>(i);
    out << "<line x1=\"" << px(left) << "\" y1=\"" << px(y) << "\" x2=\"" << px(left + 22) << "\" y2=\"" << px(y)
        << "\" stroke=\"" << colour(ts[i].outcome) << "\" stroke-width=\"3\"/>\n"
        << "<text x=\"" << px(left + 28) << "\" y=\"" << px(y + 4) << "\">sample " << ts[i].sample << ": "
        << escape(to_string(ts[i].outcome)) << "</text>\n";
  }
}

void write_trajectories(std::ostream& out, const std::vector<McTrajectory>& ts) {
  out << "<h2>Trajectories</h2>\n";
  if (ts.empty()) {
    out << "<p class=\"note\">Trajectories are not available for this report (a report from merged shard CSVs has "
           "none: the CSVs do not carry them).</p>\n";
    return;
  }
  constexpr double margin = 24, legend_w = 220;
  const View v = make_view(bounds_of(ts), 480, 120, margin);
  const double w = v.box_w + 2 * margin + legend_w;
  const double h = std::max(v.box_h + 2 * margin, 2 * margin + 18 * static_cast<double>(ts.size()));
  out << kSvgOpen << " width=\"" << px(w) << "\" height=\"" << px(h) << "\" viewBox=\"0 0 " << px(w) << " " << px(h)
      << "\" aria-label=\"object paths in the plane\">\n"
      << "<rect x=\"" << px(margin) << "\" y=\"" << px(margin) << "\" width=\"" << px(v.box_w) << "\" height=\""
      << px(v.box_h) << "\" fill=\"#fafafa\" stroke=\"#ccc\"/>\n";
  for (const McTrajectory& t : ts) write_path(out, v, t);
  write_legend(out, ts, v.box_w + 2 * margin, margin + 6);
  out << "</svg>\n<p class=\"note\">The object's position (x right, y up, equal scales) after each step; the dot "
         "marks the start. x from "
      << num(v.b.x0) << " to " << num(v.b.x1) << " m, y from " << num(v.b.y0) << " to " << num(v.b.y1) << " m.</p>\n";
}

}  // namespace

void write_mc_report(const McStudy& study, const McSummary& summary, const std::vector<McTrajectory>& trajectories,
                     const std::string& title, std::ostream& out) {
  write_head(out, title.empty() ? std::string("Monte Carlo study") : title);
  write_study(out, study);
  write_result(out, summary);
  write_histogram(out, study, summary);
  write_bins(out, summary);
  write_trajectories(out, trajectories);
  out << "</body>\n</html>\n";
}

}  // namespace qs::io
