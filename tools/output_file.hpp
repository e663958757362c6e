// Output files that never look complete unless they are: the data goes to a temporary
// file beside the target, which is renamed onto the target only by commit(). A run that
// fails (or throws) leaves no target file, or the previous one untouched.
#pragma once

#include <fstream>
#include <string>

namespace qs::io {

class OutputFile {
 public:
  /// Opens "<path>.partial"; throws std::runtime_error naming the path when it cannot.
  explicit OutputFile(std::string path);
  ~OutputFile();  // removes the temporary file unless committed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::ostream& stream() { return out_; }
  /// Flushes, checks for write errors and renames onto the target; throws on failure.
  void commit();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::string temp_;
  std::ofstream out_;
  bool committed_ = false;
};

/// The provenance comment every output file starts with (one line, '#'-prefixed):
/// quasistep version, scene file and hash, seed, world and model.
std::string provenance_line(const std::string& scene_source, const std::string& scene_hash,
                            const std::string& seed, const std::string& world, const std::string& model);

}  // namespace qs::io
