// `quasistep ucp PROBLEM.json`: one uncoupled complementarity problem (Pang, Trinkle & Lo 1996) from raw
// data in the paper's notation (quasistep/kernels/ucp.hpp, docs/ucp.md; problem files are read by
// quasistep/core/formulations/ucp/ucp_problem_file.hpp), solved by the bilinear LP
// algorithm, the exact branch-and-bound, or both; or every contact mode enumerated.
#pragma once

#include <string>

#include "quasistep/kernels/ucp.hpp"

namespace qs::cli {

struct UcpCommandOptions {
  std::string method = "auto";  // bilinear | exact | auto (bilinear, then exact if it stalls)
  bool all = false;             // enumerate every contact mode combination with a solution
  long node_limit = 10000;      // exact method: branch-and-bound nodes
};

/// One line of JSON (docs/ucp.md): status, method, x, y, q_dot, theta_dot, c_n, c_t, tau,
/// residual, pairs / nodes, reason, time. The vectors are null unless the status is solved.
/// Data that Ucp::build rejects throw JsonInputError.
std::string solve_ucp_to_json(const UcpData& data, const UcpCommandOptions& options);

}  // namespace qs::cli
