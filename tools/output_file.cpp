#include "tools/output_file.hpp"

#include <cstdio>
#include <stdexcept>

#include "core/version.hpp"

namespace qs::io {

OutputFile::OutputFile(std::string path) : path_(std::move(path)), temp_(path_ + ".partial") {
  out_.open(temp_, std::ios::binary | std::ios::trunc);
  if (!out_) throw std::runtime_error("cannot write output file \"" + path_ + "\"");
  out_.precision(17);  // round-trip doubles
}

OutputFile::~OutputFile() {
  if (!committed_) {
    out_.close();
    std::remove(temp_.c_str());
  }
}

void OutputFile::commit() {
  out_.flush();
  const bool ok = static_cast<bool>(out_);
  out_.close();
  if (!ok) throw std::runtime_error("error while writing output file \"" + path_ + "\"");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0)
    throw std::runtime_error("cannot move output into place at \"" + path_ + "\"");
  committed_ = true;
}

std::string provenance_line(const std::string& scene_source, const std::string& scene_hash, const std::string& seed,
                            const std::string& world, const std::string& model) {
  return std::string("# quasistep ") + kVersion + " scene=" + scene_source + " scene_hash=" + scene_hash +
         " seed=" + seed + " world=" + world + " model=" + model;
}

}  // namespace qs::io
