// A UCP problem file (docs/ucp.md): the raw data of Pang, Trinkle & Lo 1996, sec. 2, as JSON
// {"P", "J_n", "J_t", "theta_dot", "alpha", "d" | "g_obj", "g_man", "tau", "mu"}; what
// `quasistep ucp` reads and the tests and benchmarks load the paper's data sets 1-4 from.
#pragma once

#include <string>

#include "quasistep/kernels/ucp.hpp"

namespace qs {

/// Reads and checks a problem file; throws JsonInputError naming the field (types here,
/// sizes and values by Ucp::build).
UcpData load_ucp_problem(const std::string& path);
/// The same, from the file's text.
UcpData read_ucp_problem(const std::string& text);
/// Builds the problem or throws the builder's complaint as a JsonInputError.
void build_ucp_or_throw(Ucp& u, const UcpData& data);

}  // namespace qs
