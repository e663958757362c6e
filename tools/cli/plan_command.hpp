// `quasistep plan SCENE --out plan.csv`: an OMPL kinodynamic planner (RRT, SST or KPIECE) from
// the scene's initial state to its plan.goal region, stepping the scene's quasistatic model
// (quasistep/planning/ompl_adapter.hpp, docs/planning.md). Writes the solution as a command file that
// `quasistep run SCENE --commands plan.csv` replays bitwise to the goal.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "quasistep/core/scene.hpp"

namespace qs::cli {

struct PlanCommandOptions {
  std::string scene;
  std::string planner = "rrt";      // rrt | sst | kpiece
  double time = 10.0;               // s of wall time
  long max_propagations = 0;        // 0: no limit
  std::uint64_t seed = 1;
  std::string sampler = "batched";  // batched | single: RRT's directed control sampler
  int controls = 32;                // the batched sampler's K
  int threads = 0;                  // the batched sampler's batch engine (0: all cores)
  std::string out;
};

/// Plans and writes the command file; returns 0 with a plan, 3 when none was found within the
/// limits (nothing written), or throws std::runtime_error (input; the CLI prints it, exit 1).
int run_plan(const Scene& scene, const PlanCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace qs::cli
