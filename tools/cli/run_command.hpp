// `quasistep run`: one world stepped from a scene (or a command file), its trajectory, contact
// impulses and replay page written; and `quasistep render`: the replay page of a trajectory
// file (docs/cli.md).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace qs::cli {

struct RunOptions {
  std::string scene;
  std::optional<int> steps;
  std::string out;
  std::string forces;
  std::string commands;
  std::string html;
  std::string derivatives;
  std::optional<double> log_barrier_weight;
};

struct RenderOptions {
  std::string scene;
  std::string traj;
  std::string forces;
  std::string out;
};

/// Exit kOk, or kStepFailed naming the step that could not be solved (cli.hpp).
int cmd_run(const RunOptions& opt, std::ostream& out, std::ostream& err);
int cmd_render(const RenderOptions& opt, std::ostream& out, std::ostream& err);

}  // namespace qs::cli
