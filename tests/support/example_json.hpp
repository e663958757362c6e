// A scene file of the source tree as JSON (examples/FILE, or any path under the source), for
// tests that edit a field before parsing it.
#pragma once

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace qs::test {

/// The JSON file at `path`, relative to the source tree's root.
inline nlohmann::json source_json(const std::string& path) {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/" + path);
  return nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

inline nlohmann::json example_json(const std::string& file) { return source_json("examples/" + file); }

}  // namespace qs::test
