// Fuzz target: the `quasistep lcp` problem reader. Any input must either give a problem or
// throw JsonInputError; anything else is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "quasistep/core/json_node.hpp"
#include "quasistep/core/lcp_problem_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const qs::LcpProblem p = qs::read_lcp_problem(std::string(reinterpret_cast<const char*>(data), size));
    (void)p;
  } catch (const qs::JsonInputError&) {
  }
  return 0;
}
