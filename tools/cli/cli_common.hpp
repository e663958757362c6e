// What the command line's commands share: the error that becomes one line on stderr and
// exit code 1, the scene loader that raises it, the provenance line of a scene's output
// files, and numbers printed for people.
#pragma once

#include <stdexcept>
#include <string>

#include "quasistep/core/scene.hpp"

namespace qs::cli {

/// A user-facing failure: one line on stderr, exit code 1.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The scene file at `path`, or an InputError naming the file and the field.
Scene load_scene_or_fail(const std::string& path);

/// The provenance comment of every output file written for this scene (no seed: one world).
std::string provenance(const Scene& scene);

/// Six significant digits, for the lines people read.
std::string format_number(double v);

}  // namespace qs::cli
