// Fuzz target: the `quasistep ucp` problem reader (which also runs Ucp::build's checks).
// Any input must either give a problem or throw JsonInputError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/ucp_problem_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const qs::UcpData d = qs::read_ucp_problem(std::string(reinterpret_cast<const char*>(data), size));
    (void)d;
  } catch (const qs::JsonInputError&) {
  }
  return 0;
}
