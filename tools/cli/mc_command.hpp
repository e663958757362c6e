// `quasistep mc SCENE.json --samples N --seed S [--out CSV] [--report HTML] [--shard K/M]`
// and `quasistep mc-merge A.csv B.csv ... [--report HTML]` (docs/monte-carlo.md).
// Both print the same summary table on stdout for the same samples, so a study split into
// shards and merged reads exactly like one run; timing and file lines go to stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/core/scene.hpp"

namespace qs::cli {

struct McCommandOptions {
  std::string scene;        // the file, for messages and the CSV
  long samples = 10000;
  std::uint64_t seed = 0;
  std::string out;          // sample CSV ("" = none)
  std::string report;       // HTML report ("" = none)
  std::string shard = "0/1";  // K/M
  int threads = 0;
  int trajectories = 8;
  bool progress = false;    // a progress bar on err (the CLI sets it when stderr is a terminal)
  std::string report_axes;  // the report's scatter plot: "A,B" (default: the first two parameters)
  std::string command_line; // the report's provenance
};

/// What runs a study's samples for run_mc, handing their records to records_sink chunk by
/// chunk in sample order: run_monte_carlo in one process, or the MPI ranks' runner.
using McRunner = std::function<McRun(const Scene&, const McOptions&)>;

/// Throws BatchError / std::runtime_error with a one-line message on bad input.
int run_mc(const Scene& scene, const McCommandOptions& o, std::ostream& out, std::ostream& err,
           const McRunner& runner = {});
/// The McOptions of a command's options (samples, seed, shard, threads, paths kept).
McOptions mc_options(const McCommandOptions& o);

/// Throws io::McCsvError / std::runtime_error with a one-line message on bad input.
/// `scene` (may be null): the study's scene, for the report's picture and replays.
int run_mc_merge(const std::vector<std::string>& files, const std::string& report, const Scene* scene,
                 const std::string& report_axes, const std::string& command_line, std::ostream& out,
                 std::ostream& err);

}  // namespace qs::cli
