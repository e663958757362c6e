// An LCP problem file (docs/cli.md, "lcp"): one LCP (or mixed LCP) as raw data, what
// `quasistep lcp` and the Python module's solve_lcp read, solved by Lemke, or by the exact
// enumeration (quasistep/kernels/lcp_enumeration.hpp) with a certificate when none exists.
#pragma once

#include <string>

#include "quasistep/kernels/eigen.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// {"M": [[...]], "q": [...], "free": k}: the first k variables free with equality rows.
struct LcpProblem {
  Eigen::MatrixXd M;
  Eigen::VectorXd q;
  int free = 0;
};

/// The largest problem `lcp` (and the Python module's solve_lcp) solves: n <= 128.
inline constexpr int kLcpCapacity = 128;

/// What Lemke concluded: z and w hold a verified solution when status is `solved`, else they
/// are empty. With free variables, z holds all n variables (the free ones first) and
/// w = M z + q (zero on the free rows, up to rounding).
struct LcpSolution {
  Status status = Status::not_run;
  Eigen::VectorXd z, w;
  int pivots = 0;
  double residual = 0.0;
};

/// Solves a problem whose sizes fit (q.size() <= kLcpCapacity, M square of that size,
/// 0 <= free <= n); non-finite entries come back as `bad_input`.
LcpSolution solve_lcp(const LcpProblem& p);

/// Reads and checks a problem file; throws JsonInputError naming the field.
LcpProblem load_lcp_problem(const std::string& path);
/// The same, from the file's text.
LcpProblem read_lcp_problem(const std::string& text);

/// solve_lcp's answer as {"status": ..., "z": [...], "w": [...], "pivots": n, "residual": r}
/// on one line; z and w are null unless the status is `solved`.
std::string solve_lcp_to_json(const LcpProblem& p);

struct LcpSolveOptions {
  std::string method = "lemke";  // lemke | exact (the enumeration) | auto (Lemke, then exact)
  long node_limit = 10000;       // exact / auto: the enumeration's node limit (>= 1)
};

/// With method "lemke", solve_lcp_to_json(p), byte for byte. With "exact" or "auto", one
/// line {"status", "method" (the one that answered: "lemke" or "exact"), "z", "w",
/// "residual", "pivots" (when Lemke ran), "lemke_status" (auto, when Lemke did not solve
/// it), "nodes" (when the enumeration ran), "reason" (unless solved), "certificate"
/// (infeasible: {"free", "exact", "leaves": [{"z_zero", "w_zero", "y", "exact"}, ...]},
/// docs/cli.md)}. auto falls back to the enumeration when Lemke ends on a ray, at its pivot
/// limit or in a numerical failure. Throws std::invalid_argument for an unknown method or
/// a node limit below 1.
std::string solve_lcp_to_json(const LcpProblem& p, const LcpSolveOptions& options);

}  // namespace qs
