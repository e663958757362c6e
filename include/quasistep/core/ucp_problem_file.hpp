// A UCP problem file (docs/ucp.md): the raw data of Pang, Trinkle & Lo 1996, sec. 2, as JSON
// {"P", "J_n", "J_t", "theta_dot", "alpha", "d" | "g_obj", "g_man", "tau", "mu"}; what
// `quasistep ucp` reads and the tests and benchmarks load the paper's data sets 1-4 from;
// and the answer `quasistep ucp` prints: the problem solved by the bilinear LP algorithm, the
// exact branch-and-bound, or both, or every contact mode enumerated (docs/ucp.md).
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

struct UcpSolveOptions {
  std::string method = "auto";  // bilinear | exact | auto (bilinear, then exact if it stalls)
  bool all = false;             // enumerate every contact mode combination with a solution
  long node_limit = 10000;      // exact method: branch-and-bound nodes
};

/// One line of JSON (docs/ucp.md): status, method, x, y, q_dot, theta_dot, c_n, c_t, tau,
/// residual, pairs / nodes, reason, time. The vectors are null unless the status is solved.
/// Data that Ucp::build rejects throw JsonInputError.
std::string solve_ucp_to_json(const UcpData& data, const UcpSolveOptions& options);

}  // namespace qs
