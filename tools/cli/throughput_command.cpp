#include "tools/cli/throughput_command.hpp"

#include <chrono>
#include <cstdio>
#include <iomanip>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "tools/cli/cli.hpp"
#include "tools/cli/mpi_session.hpp"

namespace qs::cli {

int run_throughput(const Scene& scene, const ThroughputOptions& o, std::ostream& out) {
  const Model& m = *scene.model;
  const int steps = o.steps >= 0 ? o.steps : m.step.steps;
  if (steps > 0 && !(m.step.h > 0)) throw BatchError("throughput: the scene gives no step.h");
  WorldBatch batch = WorldBatch::from_scene(scene, o.worlds);
  // --scalar: the per-world path even where a lane kernel exists (the same numbers,
  // quasistep/batch/batch_stepper.hpp); the report's path line names the path that ran and why.
  BatchStepper stepper(batch, {.threads = o.threads, .scalar = o.scalar});

  const auto t0 = std::chrono::steady_clock::now();
  stepper.run(batch, steps);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  long world_steps = 0;
  for (int w = 0; w < batch.size(); ++w) world_steps += batch.world_step()[w];
  // Under an MPI launcher every rank steps these worlds: the report (rank 0's) gives the
  // ranks' world-steps and rates summed, and the slowest rank's time (docs/cluster.md).
  const int ranks = mpi_size();
  const double rate = mpi_sum(seconds > 0 ? static_cast<double>(world_steps) / seconds : 0.0);
  const double all_steps = mpi_sum(static_cast<double>(world_steps)), slowest = mpi_max(seconds);
  if (mpi_rank() > 0) return kOk;
  out << "throughput: " << batch.size() << " worlds x " << steps << " steps of " << to_string(m.formulation)
      << " (" << (m.name.empty() ? o.scene : m.name) << ")\n";
  out << "  path          " << stepper.path() << "\n";
  out << "  threads       " << (o.threads > 0 ? std::to_string(o.threads) : std::string("all"))
      << (ranks > 1 ? " per rank" : "") << "\n";
  if (ranks > 1) out << "  ranks         " << ranks << " MPI ranks, each stepping the worlds; rates summed\n";
  out << "  time          " << std::setprecision(4) << slowest << " s\n";
  out << "  world-steps   " << std::setprecision(15) << all_steps << " (" << std::setprecision(4) << rate
      << " per second)\n";
  if (stepper.lanes()) out << "  fallbacks     " << stepper.fallback_count() << " world-steps finished by the scalar fallback\n";
  const int failed = batch.failed_count();
  out << "  failed        " << failed << " of " << batch.size() << " worlds\n";
  int shown = 0;
  for (int w = 0; w < batch.size() && shown < 5; ++w)
    if (batch.failed(w)) {
      ++shown;
      // Steps counted from 1, as `run` names them (world_failed_step counts the steps done).
      out << "    world " << w << " at step " << batch.world_failed_step()[w] + 1 << ": "
          << to_string(batch.world_status()[w]) << (batch.failure_detail(w).empty() ? "" : ": ")
          << batch.failure_detail(w) << "\n";
    }
  if (failed > shown) out << "    (" << failed - shown << " more)\n";
  if (o.hash) {
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(batch.hash()));
    out << "  hash          " << hex << "\n";
  }
  return kOk;  // failed worlds are an outcome of a batch command (tools/cli/cli.hpp), reported above
}

}  // namespace qs::cli
