// `quasistep throughput SCENE.json --worlds N --steps S`: N copies of the scene's world (its
// overrides cycled over them) stepped S times by the batch engine; prints world-steps per
// second, the failed worlds, and with --hash a hash of the final batch state.
#pragma once

#include <ostream>
#include <string>

#include "quasistep/core/scene.hpp"

namespace qs::cli {

struct ThroughputOptions {
  std::string scene;   // the file, for the report
  int worlds = 1024;
  int steps = -1;      // -1: the scene's step.steps
  int threads = 0;     // 0: all cores
  bool scalar = false; // the per-world path even where a lane kernel exists
  bool hash = false;
};

/// Writes the report to `out`; bad batch input throws BatchError (the caller prints it).
/// Returns the exit code, 0: failed worlds are an outcome, counted and listed in the report.
int run_throughput(const Scene& scene, const ThroughputOptions& options, std::ostream& out);

}  // namespace qs::cli
