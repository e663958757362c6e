// An example scene (examples/FILE) as JSON, for tests that edit a field before parsing it.
#pragma once

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

namespace qs::test {

inline nlohmann::json example_json(const std::string& file) {
  std::ifstream in(std::string(QUASISTEP_SOURCE_DIR) + "/examples/" + file);
  return nlohmann::json::parse(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()));
}

}  // namespace qs::test
