// An exact (mixed) LCP method for when Lemke's ends on a ray: branch-and-bound over the
// complementarity pairs with a linear program at every node.
//
//   find u (free, k entries), z >= 0 (n - k):  w = M [u; z] + q,  w_u = 0,
//   w_z >= 0,  z_i w_i = 0.
//
// Each pair i is a disjunction: z_i = 0 ("first") or w_i = 0 ("second"). A node fixes some
// pairs and asks the LP kernel (quasistep/kernels/dense_lp.hpp) for a point of
//   { M x + q = s,  s_u = 0,  s >= 0,  z >= 0,  fixed z_i = 0,  fixed s_i = 0 }
// minimising the sum of z_i + s_i over the unfixed pairs (which steers it toward
// complementary points). An empty LP closes the node (its Farkas certificate is verified
// by the LP kernel); an LP point whose unfixed pairs are all complementary (the scaled
// natural residual of the whole point <= tolerance) is a solution; otherwise the node
// branches on its most violated pair (largest min(z_i, s_i), smallest index on ties).
// The search (quasistep/kernels/branch_and_bound.hpp) stops at the first solution in its
// deterministic order. When every node closes, no solution exists: `infeasible`, with the
// exhausted tree (every leaf an LP Farkas certificate) as the proof; with
// LcpEnumerationOptions::record_certificate the leaves' certificates are kept (below). The tree can be
// exponential in n (the LCP is NP-complete in general): a node limit bounds it
// (`iteration_limit`). This is the fallback of the steppers, not their main path.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <memory>
#include <vector>

#include "quasistep/kernels/bnb_stats.hpp"
#include "quasistep/kernels/lcp_acceptance.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

template <class Relaxation>
class BranchAndBound;  // quasistep/kernels/branch_and_bound.hpp, included where the search runs

struct LcpEnumerationOptions {
  long max_nodes = 4096;
  double tolerance = kLcpTolerance;  // tol / max|q| of the acceptance rule (lcp_acceptance.hpp)
  int round_width = 4;
  /// Keep each closed leaf's Farkas vector (Result::certificate) for a proof a reader can
  /// check. Off by default: the steppers' fallback needs only the verdict, and the same
  /// search runs either way (the same nodes, the same answer).
  bool record_certificate = false;
};

/// One closed leaf of an exhausted search: the pairs it fixes and a vector y that proves its
/// LP empty (Farkas' lemma). With g = M' y (M and q the caller's data, x = [u; z]):
///   q' y < 0;   g_j = 0 for the free variables j < k;   for every j >= k:
///   y_j >= 0 unless the leaf fixes w_j = 0,   g_j <= 0 unless it fixes z_j = 0.
/// Then no x of the leaf exists: 0 <= y' w = g' x + q' y <= q' y < 0 (each term y_j w_j is
/// zero or >= 0, each g_j x_j zero or <= 0).
struct LcpLeafCertificate {
  std::vector<int> z_zero;  // variables j (>= k) the leaf fixes at z_j = 0, increasing
  std::vector<int> w_zero;  // variables j (>= k) the leaf fixes at w_j = 0, increasing
  Eigen::VectorXd y;        // (n)
  /// The inequalities above hold in exact arithmetic on these doubles (M, q and y as
  /// given), checked by error-free transformations; false: only to the LP kernel's
  /// tolerance (verify_farkas).
  bool exact = false;
};

/// The exact sign (-1, 0, 1) of sum_i a_i b_i over doubles, by error-free products (fma)
/// and an expansion sum (Shewchuk, "Adaptive precision floating-point arithmetic and fast
/// robust geometric predicates", Discrete Comput. Geom. 18, 1997); 2 when it cannot be
/// certain (a product overflows or falls where its rounding error is subnormal).
int exact_dot_sign(const Eigen::Ref<const Eigen::VectorXd>& a, const Eigen::Ref<const Eigen::VectorXd>& b);

/// Whether `leaf` proves its LP empty for LCP(M, q) with `free` free variables, by the
/// inequalities of LcpLeafCertificate in exact arithmetic.
bool lcp_leaf_certificate_exact(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                                int free, const LcpLeafCertificate& leaf);

class LcpEnumeration {
 public:
  struct Result {
    Status status = Status::not_run;  // solved, infeasible (proven), iteration_limit, or the
                                      // LP kernel's failure; bad_input for a malformed problem
    BnbStats stats;
    Eigen::VectorXd x;                // solved: [u; z] (n)
    Eigen::VectorXd w;                // solved: M x + q (n; zero on the free rows to rounding)
    double residual = 0;              // solved: the certified residual (lcp_acceptance.hpp)
    /// infeasible with record_certificate: every leaf of the exhausted tree, sorted by its
    /// fixings pair by pair (unfixed < z_j = 0 < w_j = 0); together they cover every choice of
    /// z_j = 0 or w_j = 0 per pair, so no solution exists. Empty otherwise.
    std::vector<LcpLeafCertificate> certificate;
  };

  /// Storage for problems up to `capacity` variables.
  explicit LcpEnumeration(int capacity, const LcpEnumerationOptions& options = {});
  ~LcpEnumeration();

  /// The first k = `free` variables are free and their rows equalities.
  const Result& solve(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                      int free);

 private:
  struct Relaxation;
  int capacity_;
  LcpEnumerationOptions opt_;
  std::unique_ptr<Relaxation> relax_;
  std::unique_ptr<BranchAndBound<Relaxation>> bnb_;
  Result result_;
};

}  // namespace qs
