// The HTML report of a Monte Carlo study (`quasistep mc --report`, docs/monte-carlo.md
// "Report"): one self-contained HTML5 document, no network (inline <style> and inline SVG
// only, no scripts, links or external images), so it opens offline and can be archived.
// It shows the study, the success rate with its Wilson 95% interval, the outcome
// histogram, success per bin of each uncertain parameter and, when given, the object's
// path in the plane for the first samples.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "quasistep/batch/monte_carlo.hpp"

namespace qs::io {

/// Writes the report. Text from the input (title, model, paths, success criterion) is
/// HTML-escaped; degenerate input (no samples, empty bins, a zero-width parameter range, a
/// trajectory that does not move) still gives finite SVG coordinates. An empty
/// `trajectories` (e.g. merged shard CSVs, which do not carry them) says so in a paragraph.
void write_mc_report(const McStudy& study, const McSummary& summary, const std::vector<McTrajectory>& trajectories,
                     const std::string& title, std::ostream& out);

}  // namespace qs::io
