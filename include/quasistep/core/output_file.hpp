// The one rule every output option of the CLI follows (docs/cli.md, "Output files"):
//   - a regular file or a new path: written to a temporary file beside it (a unique name),
//     renamed onto it on success; a failed command leaves no trace of it;
//   - "-": standard output (at most one option of a command);
//   - a character device, FIFO or socket (/dev/null, a named pipe): written straight through,
//     never renamed over and never deleted;
//   - a symlink: the file it points to, by the same rule; the link stays a link;
//   - a directory, a missing or unwritable folder, a block device, or the same file as one of
//     the command's inputs or as another of its outputs: refused before any work starts.
// A command's outputs are one transaction: OutputSet::commit() renames them only when every
// one of them has been written completely.
#pragma once

#include <array>
#include <csignal>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace qs {
struct Scene;
}

namespace qs::io {

/// A user-facing output problem; what() is one line naming the option and the cause.
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// What an output path names, decided when it is added.
enum class OutputKind {
  file,             // a regular file or a new one: temporary file, then rename
  standard_output,  // "-"
  stream,           // a character device, FIFO or socket: written straight through
};

class OutputSet;

/// One output of a command; its stream is valid once OutputSet::open() has run.
class Output {
 public:
  std::ostream& stream() { return *stream_; }
  const std::string& option() const { return option_; }
  const std::string& path() const { return path_; }  // as the user gave it
  OutputKind kind() const { return kind_; }

 private:
  friend class OutputSet;
  std::string option_, path_;
  std::string target_;  // the path written (a symlink followed to its end)
  OutputKind kind_ = OutputKind::file;
  bool existed_ = false;     // a regular file was there: its mode is kept
  unsigned existing_mode_ = 0;
  std::string temp_;         // OutputKind::file: the temporary file
  std::unique_ptr<std::ostream> own_;  // the file stream (not for standard output)
  std::ostream* stream_ = nullptr;
};

/// The outputs of one command, checked together against the rule, each other and the
/// command's inputs, written, then committed all at once. Destroying a set that was not
/// committed removes every temporary file (also on a signal once
/// install_interrupt_cleanup() has run).
class OutputSet {
 public:
  /// `standard_output` receives the output named "-"; `inputs` are the files the command
  /// reads (an output may not be one of them).
  OutputSet(std::ostream& standard_output, std::vector<std::string> inputs);
  ~OutputSet();
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  /// Checks one output option against the rule (no file is touched yet); nullptr for an
  /// empty path (the option was not given). Throws OutputError.
  Output* add(const std::string& option, const std::string& path);
  /// Creates the temporary files and opens the streams (a FIFO's open waits for a reader).
  /// Throws OutputError.
  void open();
  /// True when one of the outputs is "-": the command's own summary then goes to stderr.
  bool uses_standard_output() const;
  /// Flushes and checks every output, then renames the files into place; throws
  /// OutputError (and leaves no file of the set behind) when any of them fails.
  void commit();

 private:
  std::ostream& standard_output_;
  std::vector<std::string> inputs_;
  std::vector<std::unique_ptr<Output>> outputs_;
  bool committed_ = false;
};

/// The signals after which no temporary file of an OutputSet is left behind: those whose
/// default action ends the process and that a user, a shell, ulimit or a job scheduler
/// sends to a long run.
inline constexpr std::array<int, 12> kInterruptSignals{SIGINT,  SIGTERM, SIGHUP,  SIGPIPE,   SIGQUIT, SIGXCPU,
                                                       SIGXFSZ, SIGALRM, SIGUSR1, SIGUSR2, SIGVTALRM, SIGPROF};

/// Removes the temporary files of every live OutputSet when the process receives one of
/// kInterruptSignals, then dies of the signal as it would have; a signal the process was
/// started with ignored (`nohup`) stays ignored. The CLI's main() calls it once.
void install_interrupt_cleanup();

/// The provenance comment every output file starts with (one line, '#'-prefixed):
/// quasistep version, scene file and hash, seed, world and model.
std::string provenance_line(const std::string& scene_source, const std::string& scene_hash,
                            const std::string& seed, const std::string& world, const std::string& model);
/// The same for a scene: its file, hash, world and formulation ("none": one world, no seed).
std::string provenance_line(const Scene& scene, const std::string& seed = "none");

/// `text` with control characters escaped as in JSON (\n, \r, \t, \u001b), so that a path
/// or a name put into a message keeps it on one line.
std::string printable(const std::string& text);

}  // namespace qs::io
