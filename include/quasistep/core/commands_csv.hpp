// Command files: a sequence of velocity commands, one row per step (docs/cli.md, "run";
// docs/scene-format.md, "Command layout"). The header is `step,<command names>`: the scene's
// velocity-commanded joints in `joints` order (command_names()); row l holds the velocities
// (m/s or rad/s) held over step l, the step that moves the state from t_{l-1} to t_l, for
// l = 1, 2, ... in order. Lines starting with '#' are comments. `quasistep run --commands`
// reads them.
#pragma once

#include <iosfwd>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace qs::io {

/// A command file that cannot be read or does not fit the scene: what() is one line naming
/// the file, the line and the cause.
class CommandsCsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CommandSequence {
  std::vector<std::string> names;  // one per commanded joint, in the scene's order
  int steps = 0;
  std::vector<double> values;      // steps x names.size(), row-major
  /// Step l's velocities (l from 1).
  std::span<const double> step(int l) const {
    return std::span<const double>(values).subspan(static_cast<std::size_t>(l - 1) * names.size(), names.size());
  }
};

/// Reads a command file for a scene whose commanded joints are `names`; `file` names it in
/// errors. Throws CommandsCsvError.
CommandSequence read_commands_csv(std::istream& in, const std::string& file, std::span<const std::string> names);
/// The same from a path ("-" is standard input).
CommandSequence read_commands_csv_file(const std::string& path, std::span<const std::string> names);
/// Writes `commands` after a provenance comment line (io::provenance_line), numbers to 17
/// significant digits so that reading the file back gives the same doubles.
void write_commands_csv(const CommandSequence& commands, const std::string& provenance, std::ostream& out);

}  // namespace qs::io
