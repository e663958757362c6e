// The HTML report of a Monte Carlo study (`quasistep mc --report`, `mc-merge --report`;
// docs/monte-carlo.md, "Report"): one self-contained HTML5 document (inline style, SVG and
// script; no network, no other file), so it opens offline and can be archived. It shows
// where the numbers come from (version, date, command, scene, seed), the success rate with
// its Wilson 95% interval and the outcomes; a picture of the scene and replays of a few
// samples of each outcome; the success quantity of those samples over time with the
// criterion marked; two uncertain parameters against each other, coloured by outcome; the
// success rate per bin of each parameter with its interval; the object's path for the
// first samples. Every plot has axes with ticks and units.
#pragma once

#include <array>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/core/scene.hpp"
#include "tools/report/replay.hpp"

namespace qs::io {

/// One sample run again for the report (sample_world, quasistep/batch/sampling.hpp): its rows and
/// impulses, and the object's pose at every row.
struct McReplay {
  long sample = 0;
  Outcome outcome = Outcome::held;
  std::vector<double> values;                 // the sample's parameter values, in the study's order
  ReplayInput replay;
  std::vector<std::array<double, 3>> object;  // per row: the object's x, y, theta
};

/// Chooses the samples to replay: up to `per_outcome` of each outcome, the first ones in
/// sample order, and runs them again; the study's scene must be `scene` (same hash).
std::vector<McReplay> replay_samples(const Scene& scene, const McStudy& study, const McRecords& records,
                                     int per_outcome = 2);

struct McReportInput {
  const McStudy* study = nullptr;
  const McSummary* summary = nullptr;
  /// Samples for the scatter plot (all, or the first ones of a large study); may be empty.
  const McRecords* records = nullptr;
  long records_of = 0;  // how many samples the study has (records may hold the first ones only)
  const std::vector<McTrajectory>* trajectories = nullptr;  // the object's path of the first samples
  const Scene* scene = nullptr;  // the scene's picture and the replays; null: neither
  const SuccessCriterion* success = nullptr;  // the criterion's numbers, for the plots
  std::vector<McReplay> replays;
  std::string no_replays;  // why there are no replays (shown when `replays` is empty)
  std::string title, version, date, command_line, scene_path, description;
  std::array<int, 2> axes{0, 1};  // the parameters of the scatter plot
};

/// Writes the report. Text from the input is HTML-escaped; degenerate input (no samples,
/// empty bins, a zero-width range, a path that does not move) still gives finite SVG.
void write_mc_report(const McReportInput& in, std::ostream& out);

/// The unit of a parameter path for axis labels ("m", "rad", "kg", ...; "" for a friction
/// coefficient or another pure number).
std::string parameter_unit(const std::string& path);

/// "A,B" (parameter paths or 1-based indices) -> two distinct indices of study parameters;
/// throws std::runtime_error naming the unknown one.
std::array<int, 2> parse_report_axes(const std::string& text, const McStudy& study);

/// Samples a report keeps for its scatter plot at most (the first ones).
inline constexpr long kReportScatterSamples = 5000;

}  // namespace qs::io
