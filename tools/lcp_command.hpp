// `quasistep lcp PROBLEM.json`: one LCP (or mixed LCP) from raw data, solved by Lemke.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <string>

namespace qs::cli {

/// {"M": [[...]], "q": [...], "free": k}: the first k variables free with equality rows.
struct LcpProblem {
  Eigen::MatrixXd M;
  Eigen::VectorXd q;
  int free = 0;
};

/// Reads and checks a problem file; throws JsonInputError naming the field.
LcpProblem load_lcp_problem(const std::string& path);
/// The same, from the file's text.
LcpProblem read_lcp_problem(const std::string& text);

/// {"status": ..., "z": [...], "w": [...], "pivots": n, "residual": r} on one line; z and w
/// are null unless the status is `solved` (a verified solution). With free variables, z
/// holds all n variables (the free ones first) and w = M z + q (zero on the free rows).
std::string solve_lcp_to_json(const LcpProblem& p);

}  // namespace qs::cli
