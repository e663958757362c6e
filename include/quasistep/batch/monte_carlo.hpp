// Monte Carlo studies (docs/monte-carlo.md): N samples of a scene's uncertain parameters
// (quasistep/batch/sampling.hpp), each a world stepped by the batch engine through the scene's command
// schedule, each judged by the scene's `success` section.
//
// Outcomes. A `lifted` study: held (the object rose at least `height` above its initial y
// and stayed there from the first step that reached it through `hold_until`), slipped
// (touched, not held), never_touched, solver_failed. A `goal_region` study: in_goal (the
// final pose inside the region, theta compared modulo 2 pi), missed, never_touched,
// solver_failed. "Touched": some contact slot between the object and a linked (robot) body
// had a signed distance <= kTouchDistance at the start or after a step. A world whose step
// fails is solver_failed whatever happened before (its status and step are recorded).
//
// One answer per sample: a sample's parameters come from the stream (seed, sample index),
// and its world's trajectory is bitwise the same in any batch split and at any thread
// count (quasistep/batch/batch_stepper.hpp), so are its outcome and final pose. Shard K of M runs
// the samples [K N / M, (K + 1) N / M).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "quasistep/core/scene.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// Distance (m) at or below which an object-robot contact slot counts as touching.
inline constexpr double kTouchDistance = 1e-3;

enum class Outcome : std::uint8_t { held, slipped, in_goal, missed, never_touched, solver_failed };
inline constexpr int kOutcomeCount = 6;
std::string_view to_string(Outcome o);
/// Throws std::invalid_argument for a word that is not an outcome.
Outcome outcome_from_string(std::string_view word);
inline bool is_success(Outcome o) { return o == Outcome::held || o == Outcome::in_goal; }
/// Whether a final pose lies in a goal region: |pose - center| <= tolerance per coordinate,
/// theta compared modulo 2 pi. The one test behind `in_goal`, in runs and in mc-merge's
/// row checks.
bool in_goal_region(const std::array<double, 3>& pose, const std::array<double, 3>& center,
                    const std::array<double, 3>& tolerance);
/// The four outcomes a criterion can give, success first (report order).
std::array<Outcome, 4> outcomes_of(SuccessCriterion::Kind k);

/// What makes two runs parts of one study: shards must agree on all of it.
struct McStudy {
  std::string scene_hash;  // quasistep/core/scene.hpp Scene::hash
  std::string model;       // formulation name
  std::uint64_t seed = 0;
  long samples = 0;        // N, the whole study
  int shards = 1;          // M
  std::string success;     // the criterion in words (csv header and report), e.g. "lifted cylinder >= 0.02 m until 0.6 s"
  SuccessCriterion::Kind success_kind = SuccessCriterion::Kind::lifted;
  std::string object;      // the success body's name
  std::vector<std::string> parameters;     // paths, in the scene's order
  std::vector<Distribution> distributions;  // one per parameter
};

/// Samples [first, end) of shard k of m over n samples.
std::pair<long, long> shard_range(long n, int k, int m);

/// Per-sample results of one run or of merged shards, as flat arrays (one entry per sample,
/// parameter values row-major: value(i, p) = values[i * parameter_count + p]).
struct McRecords {
  int parameter_count = 0;
  std::vector<long> sample;
  std::vector<double> values;
  std::vector<Outcome> outcome;
  std::vector<std::array<double, 3>> final_pose;  // the object's x, y, theta at the end (or at failure)
  std::vector<int> failed_step;                   // the step that failed, counted from 1; -1 unless solver_failed
  std::vector<Status> status;                     // solved, or the failure
  long size() const { return static_cast<long>(sample.size()); }
  void reserve(long n);
  void clear();
};

/// The object's pose after each step (row 0: the start) of one of the first samples.
struct McTrajectory {
  long sample = 0;
  Outcome outcome = Outcome::never_touched;
  std::vector<std::array<double, 3>> pose;
};

/// The most memory a run may use for the records and paths it keeps (bytes): more is
/// refused with a one-line error instead of failing to allocate.
inline constexpr double kMaxKeptRecordBytes = 4.0 * (1L << 30);

struct McOptions {
  long samples = 0;         // N >= 1
  std::uint64_t seed = 0;
  int shard = 0, shards = 1;  // run slice `shard` of `shards` (0 <= shard < shards)
  int threads = 0;          // 0: all this process may use
  int chunk = 4096;         // worlds per batch (memory, not results, depends on it)
  int trajectories = 8;     // keep the object's path for this many of the run's first samples
  /// Called after each step of a chunk (samples done counted pro rata) and after each chunk
  /// with the samples done and the run's total (the CLI's progress bar).
  std::function<void(long done, long total)> progress;
  /// When set, each chunk's records are handed to it, in sample order, and not kept in
  /// McRun::records: a study of any size then runs in memory bounded by `chunk` (the CLI
  /// writes the rows and adds them to the summary as they come).
  std::function<void(const McRecords& chunk)> records_sink;
};

struct McRun {
  McStudy study;
  int shard = 0;
  long first = 0, count = 0;  // the samples run: [first, first + count)
  McRecords records;
  std::vector<McTrajectory> trajectories;
  double seconds = 0.0;       // wall time of the stepping (not part of any result)
  std::string path;           // the batch engine's path line
};

/// Why a Monte Carlo study of this scene cannot run, or "" when it can: no uncertainty or
/// success section, overrides present, a formulation the batch cannot step, a parameter the
/// model ignores or that only rescales forces (each names the parameter path and why), a
/// success time after the last step.
std::string mc_unsupported_reason(const Scene& scene);

/// The study identity of a scene under these options (no stepping).
McStudy make_study(const Scene& scene, const McOptions& o);

/// Runs the options' shard of the study. Throws BatchError (one line) for bad options or a
/// scene mc_unsupported_reason refuses. Samples whose world fails are reported, not thrown.
McRun run_monte_carlo(const Scene& scene, const McOptions& o);

inline constexpr int kParameterBins = 10;

/// Success counts per equal-width bin of one parameter's range, kParameterBins bins: [low,
/// high] for uniform and truncated_normal, mean -+ 3 stddev for normal (values outside go
/// to the end bins).
struct ParameterBins {
  std::string path;
  double low = 0, high = 0;
  std::vector<long> count, successes;
};

struct McSummary {
  long samples = 0, successes = 0;
  double rate = 0, wilson_low = 0, wilson_high = 0;  // Wilson 95% score interval
  std::array<long, kOutcomeCount> outcome_count{};   // indexed by Outcome
  std::vector<ParameterBins> bins;
};

/// The Wilson score interval for k successes in n trials at z (95%: 1.959963984540054).
std::pair<double, double> wilson_interval(long k, long n, double z = 1.959963984540054);
/// The summary of any set of records of a study (a run, or merged shards): depends only on
/// the records, not on their order. No records: rate 0 and the interval [0, 1].
/// Throws std::invalid_argument when the study and the records disagree on the parameters.
McSummary summarize(const McStudy& study, const McRecords& records);

/// summarize() in pieces, for records that arrive in chunks: start with the study's empty
/// summary, add each chunk, then finish (rate and interval). The result is the same as
/// summarize() over all the records.
McSummary empty_summary(const McStudy& study, int parameter_count);
void add_to_summary(McSummary& summary, const McRecords& records);
void finish_summary(McSummary& summary);

}  // namespace qs
