// The uncoupled complementarity problem (UCP) of Pang, Trinkle & Lo (Pang, Trinkle & Lo 1996): the
// instantaneous quasistatic motion of a grasped planar object, with some joints
// velocity-controlled (alpha) and the others effort-controlled (abar).
//
// Data (Pang, Trinkle & Lo 1996, sec. 2, 0-based joint indices): P = [W^T  J_abar] (2 n_c x (n_q + |abar|),
// the n_c normal rows first), J_n and J_t (n_c x n_theta), theta_dot (only the entries in
// alpha are used), the loads d = [0; g_obj; (g_man - tau)_abar] (or g_obj, g_man and tau
// separately) and the friction coefficients mu (n_c, >= 0).
//
// Unknowns and polyhedra (sec. 2): x = [v_n; v_t+; v_t-] and y = [c_n; s_t+; s_t-], both in
// R_+^{3 n_c};
//   X = { x >= 0 : Z_n v_n + Z_t (v_t+ - v_t-) + Z J_alpha theta_alpha = 0 },
//   Y = { y >= 0 : C y + d = 0 },  C = [2U  -I  -I; P_n' - P_t' U  P_t'  0],
// where P_n, P_t are P's normal and tangential rows (so P_n' - P_t' U stacks W_n - W_t U
// over (J_n)'_abar - (J_t)'_abar U, as in the paper) and Z's null space is P's column space.
// Z is read off a column-pivoting QR of P (the trailing columns of Q span col(P)^perp),
// never formed as the projector I - P (P'P)^-1 P'. Theorem 1: the motions are the pairs
// (x, y) in X x Y with x'y = 0, pair i being (x_i, y_i).
//
// Recovery (Proposition 1): v_n = x_n, v_t = v_t+ - v_t-, c_n = y_n, c_t = s_t+ - U c_n;
// v + J_alpha theta_alpha lies in col(P) and P [q_dot; -theta_abar] = v + J_alpha theta_alpha
// (from v = W' q_dot - J theta_dot, eqs. (4)-(5): the unknown joint velocities enter with a
// minus sign); when P is rank deficient the minimum-norm [q_dot; -theta_abar] is reported.
// tau = J_n' c_n + J_t' c_t + g_man (eq. (3)) on alpha, the given value on abar. With d given
// instead of g_man and tau, g_man is unknown: tau then reports tau - g_man.
//
// Methods: UcpBilinear (the paper's LP algorithm, sec. 4 with sec. 5's restart: `solved` or
// `not_found`), UcpExact (branch-and-bound over the 3 n_c pairs: `solved`, `infeasible` with
// the exhausted tree as proof, or `iteration_limit`) and ucp_enumerate_modes (every contact
// mode combination with a solution, the enumerative method the paper compares against).
// Nothing here throws or prints; results carry a Status (quasistep/kernels/status.hpp).
// The solvers know no physics: the UCP of a scene is built in core/formulations/ucp/
// (ucp_scene.hpp), problem files are read by quasistep/core/ucp_problem_file.hpp and the
// tests' random problems are made in tests/support/random_problems.hpp.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "quasistep/kernels/branch_and_bound.hpp"
#include "quasistep/kernels/dense_lp.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// Raw data in Pang, Trinkle & Lo 1996, sec. 2's notation.
struct UcpData {
  Eigen::MatrixXd P;                      // 2 n_c x (n_q + |abar|): [W'  J_abar]
  Eigen::MatrixXd J_n, J_t;               // n_c x n_theta
  Eigen::VectorXd theta_dot;              // n_theta (entries outside alpha ignored)
  std::optional<std::vector<int>> alpha;  // velocity-controlled joints; none given: all
  std::optional<Eigen::VectorXd> d;       // n_c + n_q + |abar|: [0; g_obj; (g_man - tau)_abar]
  Eigen::VectorXd g_obj;                  // n_q (without d)
  Eigen::VectorXd g_man, tau;             // n_theta each (without d); empty: zero
  Eigen::VectorXd mu;                     // n_c, >= 0
};

/// The physical quantities of a pair (x, y) (Proposition 1 and eqs. (3)-(5)).
struct UcpMotion {
  Eigen::VectorXd q_dot;      // n_q
  Eigen::VectorXd theta_dot;  // n_theta: given on alpha, recovered on abar
  Eigen::VectorXd c_n, c_t;   // n_c
  Eigen::VectorXd tau;        // n_theta: recovered on alpha, given on abar (tau - g_man with d)
  Eigen::VectorXd v_n, v_t;   // n_c, from x
};

/// Scratch of Ucp::recover and Ucp::check. One from Ucp::make_workspace is sized for that
/// problem, and with it neither function allocates (the solvers keep one per instance).
struct UcpWorkspace {
  Eigen::VectorXd rhs;             // 2 n_c: v + J_alpha theta_alpha, then Q' times it
  Eigen::VectorXd sol, sol_perm;   // n_q + |abar|: the solve before / after P's column permutation
  Eigen::VectorXd z_temp;          // n_q + |abar|: Householder scratch (rank-deficient P)
  Eigen::VectorXd jc;              // n_theta: J_n' c_n + J_t' c_t
  Eigen::VectorXd c;               // 2 n_c: [c_n; c_t]
  Eigen::VectorXd e2, e3, e3_t;    // n_q, n_theta, n_theta: residuals of eqs. (2), (3)
  Eigen::VectorXd vn, vt;          // n_c: eqs. (4), (5)
};

/// The worst scaled residual of Pang, Trinkle & Lo 1996, eqs. (2)-(10) and where it is.
struct UcpCheck {
  double worst = 0;   // forces over their scale, velocities over theirs (see Ucp::check)
  int equation = 0;   // 2..10 (8 and 9, the same condition, are reported as 8); 0: none
  int index = -1;     // the row, contact or joint
};

class Ucp {
 public:
  /// Builds X and Y from the data. bad_input with error_field() / error_message() when the
  /// data are malformed (sizes, NaN/Inf, mu < 0, alpha out of range or repeated, P's J_abar
  /// block unlike [J_n; J_t]'s abar columns, nonzero friction rows of d); else solved.
  Status build(const UcpData& data);
  const std::string& error_field() const { return error_field_; }
  const std::string& error_message() const { return error_message_; }

  int n_c() const { return n_c_; }
  int n_q() const { return n_q_; }
  int n_theta() const { return n_theta_; }
  int n() const { return 3 * n_c_; }       // pairs, and the size of x and y
  int rank() const { return rank_; }       // of P
  const std::vector<int>& alpha() const { return alpha_; }
  const std::vector<int>& abar() const { return abar_; }

  /// X = { x >= 0 : A_x x = b_x } (rank-deficient rows of Z dropped: 2 n_c - rank rows).
  const Eigen::MatrixXd& A_x() const { return A_x_; }
  const Eigen::VectorXd& b_x() const { return b_x_; }
  /// Y = { y >= 0 : A_y y = b_y }, A_y = C, b_y = -d.
  const Eigen::MatrixXd& A_y() const { return A_y_; }
  const Eigen::VectorXd& b_y() const { return b_y_; }
  const Eigen::MatrixXd& Z() const { return Z_; }
  const Eigen::VectorXd& d() const { return d_; }
  const Eigen::VectorXd& mu() const { return mu_; }

  /// The right-hand sides the LPs of every method use: b_x and b_y each scaled by a power of
  /// two (exact) to unit size, max|b| in [1, 2) (quasistep/kernels/unit_scale.hpp), so that
  /// the LP kernel's tolerances, which have an absolute floor, see data of unit size (with
  /// loads of 1e-9 every y >= 0 near 0 met C y = -d to that floor), and loads that differ by
  /// a power of two give the same LPs, bit for bit, and so the same verdict. An LP's point in these units is 2^x_exponent() x (2^y_exponent() y);
  /// every result (x, y, products) is reported in X's and Y's own units.
  const Eigen::VectorXd& b_x_lp() const { return b_x_lp_; }
  const Eigen::VectorXd& b_y_lp() const { return b_y_lp_; }
  int x_exponent() const { return x_exp_; }
  int y_exponent() const { return y_exp_; }
  /// A pair in the LPs' units back in X's and Y's (exact unless it underflows).
  void from_lp_units(Eigen::Ref<Eigen::VectorXd> x, Eigen::Ref<Eigen::VectorXd> y) const;

  /// Scales of the two sides, for tolerances: max|b_x| and max|b_y| (0 for a cone).
  double x_scale() const { return x_scale_; }
  double y_scale() const { return y_scale_; }

  /// A UcpMotion with every vector sized for this problem.
  UcpMotion make_motion() const;
  /// A UcpWorkspace sized for this problem.
  UcpWorkspace make_workspace() const;
  /// Recovers the motion of (x, y) (any pair of X x Y, complementary or not). Allocates
  /// nothing given a sized `out` and make_workspace()'s ws; the overload without ws makes one.
  void recover(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
               UcpMotion& out, UcpWorkspace& ws) const;
  void recover(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
               UcpMotion& out) const;
  /// Eqs. (2)-(10) on a motion. Force residuals ((2), (3), (7), the force side of (8)-(10))
  /// are divided by max(|d|, |W| |c|, |J| |c|), velocity residuals ((4)-(6)) by
  /// max(|J_alpha theta_alpha|, |W| |q_dot|, |J| |theta_dot|, |v|); a complementarity
  /// condition (8)-(10) counts as the smaller of its two scaled sides. Allocates nothing
  /// with make_workspace()'s ws; the overload without ws makes one.
  UcpCheck check(const UcpMotion& m, UcpWorkspace& ws) const;
  UcpCheck check(const UcpMotion& m) const;

  /// Whether the LP kernel's Farkas vector f proves { z >= 0 : A z = b, z_j = 0 where
  /// upper_j = 0 } empty, for X's LP (side 'X': A_x, b_x_lp) or Y's ('Y': A_y, b_y_lp), checked
  /// apart from the kernel: g = A'f and beta = f'b are summed in long double with a bound on
  /// each sum's rounding. Measuring each variable by its column's effect on the rows,
  /// zeta_j = max_i |A_ij| z_j, every z of the set would give beta = sum_j g_j z_j <=
  /// G |zeta|_1, G = the largest certified g_j / max_i |A_ij| over the free columns, while
  /// |zeta|_1 >= max|b|. Accepted when beta > 0 certainly and the radius beta / G it proves
  /// (no z with |zeta|_1 below it; infinite when G <= 0) is at least kUcpCertifiedRadius
  /// times max|b|. The exact method, the bilinear algorithm's first LPs and the enumeration
  /// close a set as empty only through this check; where it fails, their answer is
  /// numerical_failure.
  bool certifies_empty(char side, const Eigen::Ref<const Eigen::VectorXd>& upper,
                       const Eigen::Ref<const Eigen::VectorXd>& f) const;

  /// x'y <= tol max(1, max x max y): the complementarity test of both methods (the paper's
  /// termination rule is x'y <= 1e-10 on unit-scale data).
  static bool complementary(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& y,
                            double tol);

 private:
  bool fail(std::string field, std::string message);
  bool fits(const UcpWorkspace& w) const;  // sized for this problem (else recover/check resize it)

  int n_c_ = 0, n_q_ = 0, n_theta_ = 0, rank_ = 0;
  std::vector<int> alpha_, abar_;
  Eigen::MatrixXd P_, J_n_, J_t_, W_t_;  // W_t_ = P' (m x 2 n_c), kept for recovery/check
  Eigen::VectorXd theta_alpha_full_;     // n_theta: theta_dot on alpha, 0 on abar
  Eigen::VectorXd g_obj_, effort_, g_man_;  // effort_: tau - g_man on abar (n_theta, 0 on alpha)
  Eigen::VectorXd d_, mu_;
  Eigen::MatrixXd A_x_, A_y_, Z_;
  Eigen::VectorXd b_x_, b_y_, b_x_lp_, b_y_lp_;
  int x_exp_ = 0, y_exp_ = 0;
  Eigen::VectorXd rhs_v_;  // J_alpha theta_alpha (2 n_c)
  double x_scale_ = 0, y_scale_ = 0;
  std::string error_field_, error_message_;
  struct Factor;
  std::shared_ptr<const Factor> factor_;  // the pivoted QR/COD of P, for recovery
};

/// What an `infeasible` UCP answer proves (Ucp::certifies_empty): no motion (x, y) whose
/// entries, each weighted by its column's largest entry, sum below 2^30 times the largest
/// load (or commanded velocity) of its side: none within a billion times the problem's own
/// scale. A certificate that proves less is too close to a solution for doubles to tell:
/// numerical_failure.
inline constexpr double kUcpCertifiedRadius = 0x1p30;

/// Ucp::certifies_empty's check on any { z >= 0 : A z = b, z_j = 0 where upper_j = 0 }: the
/// Farkas vector f proves that no point has sum_j max_i |A_ij| z_j below kUcpCertifiedRadius
/// times max|b|.
bool farkas_certifies_empty(const Eigen::Ref<const Eigen::MatrixXd>& A, const Eigen::Ref<const Eigen::VectorXd>& b,
                            const Eigen::Ref<const Eigen::VectorXd>& upper, const Eigen::Ref<const Eigen::VectorXd>& f);

// ---- the paper's bilinear algorithm (Pang, Trinkle & Lo 1996, sec. 4, with sec. 5's modified restart) -----

/// What Step 3 does when no pair of adjacent extreme points improves x'y (Pang, Trinkle &
/// Lo 1996, sec. 5): both take a random pair of E(x) x E(y); then
enum class UcpRestart : std::uint8_t {
  step1,  // the modified algorithm (sec. 5): back to Step 1 from it (the default)
  step3,  // the original algorithm (sec. 4's Step 3): Step 3 repeated from it
};

struct UcpBilinearOptions {
  double tolerance = 1e-10;  // complementarity: Ucp::complementary
  int max_restarts = 20;     // random pairs taken; sec. 5: "Step 1 was reinvoked 20 times"
  UcpRestart restart = UcpRestart::step1;
  int max_pairs = 1000;      // (x, y) pairs produced by Steps 1 and 3 before giving up
  std::uint64_t seed = 1;    // the restart's random choice (deterministic for a seed)
  /// Step 3's E(x), E(y): true, every adjacent extreme point (at a degenerate vertex, a walk
  /// over all its bases: one refactorisation each); false, the points one simplex pivot
  /// from the current basis reaches (a subset at a degenerate vertex, much cheaper).
  bool full_adjacency = false;
  double check_tolerance = 1e-7;  // Ucp::check of the recovered motion
};

struct UcpBilinearResult {
  Status status = Status::not_run;  // solved; not_found (stationary without improvement after
                                    // max_restarts, or max_pairs); infeasible when X or Y is
                                    // empty (a Farkas certificate, empty_side says which);
                                    // numerical_failure / bad_input from the LP kernel
  char empty_side = 0;              // 'X' or 'Y' with infeasible
  Eigen::VectorXd x, y;             // solved: the complementary pair; otherwise the pair with
                                    // the least x'y visited
  double product = 0;               // x'y of it
  int pairs = 0;                    // (x, y) pairs found by Steps 1 and 3 (the initial not counted)
  int lps = 0;                      // linear programs solved (the two initial ones included)
  int step3 = 0;                    // Step 3 invocations
  int restarts = 0;                 // Step 3 ending without improvement: a random pair taken
  std::vector<double> products;     // x'y of the initial pair and of every pair found
  UcpCheck check;                   // solved: of the recovered motion
  double seconds = 0;
};

class UcpBilinear {
 public:
  explicit UcpBilinear(const Ucp& ucp, const UcpBilinearOptions& options = {});
  ~UcpBilinear();
  /// Runs the algorithm on the problem given at construction.
  const UcpBilinearResult& solve();
  const UcpBilinearResult& result() const { return result_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  UcpBilinearResult result_;
};

// ---- the exact method: branch-and-bound over the pairs ------------------------------------

struct UcpExactOptions {
  /// The branch-and-bound's pools are allocated for this many nodes at construction (one
  /// warm start each: y and two LP bases, about 2 KB at n_c = 40).
  long max_nodes = 10000;
  double tolerance = 1e-10;       // complementarity of a leaf (Ucp::complementary)
  int inner_steps = 4;            // bilinear LP steps inside a node (a local search)
  int round_width = 8;
  bool parallel = true;
  double check_tolerance = 1e-7;
};

struct UcpExactResult {
  Status status = Status::not_run;  // solved, infeasible (every node closed), iteration_limit,
                                    // or an LP failure
  char empty_side = 0;              // infeasible at the root: 'X' or 'Y' is empty
  Eigen::VectorXd x, y;             // solved: a complementary pair
  BnbStats stats;
  UcpCheck check;
};

class UcpExact {
 public:
  explicit UcpExact(const Ucp& ucp, const UcpExactOptions& options = {});
  ~UcpExact();
  const UcpExactResult& solve();
  const UcpExactResult& result() const { return result_; }

  struct Relaxation;  // the node evaluation (public for the B&B template; not an API)

 private:
  const Ucp* ucp_;
  UcpExactOptions opt_;
  std::unique_ptr<Relaxation> relax_;
  std::unique_ptr<BranchAndBound<Relaxation>> bnb_;
  std::unique_ptr<DenseLp> root_x_, root_y_;  // which side is empty, before the search
  Eigen::VectorXd zero_, inf_;
  UcpMotion motion_;  // the solution's, for the check
  UcpWorkspace ws_;
  UcpExactResult result_;
};

// ---- every contact mode with a solution (the enumerative method) --------------------------

/// A contact's mode: each fixes one side of each of its three pairs (n, t+, t-), so any
/// x and y with these fixings are complementary:
///   breaking  c_n = s_t+ = s_t- = 0          rolling   v_n = v_t+ = v_t- = 0
///   sliding+  v_n = v_t- = 0, s_t+ = 0        sliding-  v_n = v_t+ = 0, s_t- = 0
/// (sliding+ is v_t >= 0 with c_t = -mu c_n). Every solution is in at least one combination;
/// a motion on the boundary of two modes is in both.
enum class ContactMode : std::uint8_t { breaking, rolling, sliding_positive, sliding_negative };
const char* to_string(ContactMode m);

struct UcpModeSolution {
  std::vector<ContactMode> modes;  // n_c
  Eigen::VectorXd x, y;
};

struct UcpEnumerationResult {
  Status status = Status::not_run;  // solved (the list is complete, possibly empty),
                                    // iteration_limit (max_nodes reached), or an LP failure
  std::vector<UcpModeSolution> solutions;  // in lexicographic order of the modes
  long nodes = 0;                           // partial mode assignments tried
  long lps = 0;
};

/// The scaled residual (Ucp::check) every solution of the enumeration passes, as the other
/// methods' answers do (their check_tolerance).
inline constexpr double kUcpEnumerationCheckTolerance = 1e-7;

/// Depth-first over the contacts: a partial assignment is dropped as soon as X or Y with
/// its fixings is empty. Exponential (4^n_c leaves at worst): for small problems. Every
/// solution found is checked (kUcpEnumerationCheckTolerance); one that fails makes the
/// result numerical_failure with no solutions.
UcpEnumerationResult ucp_enumerate_modes(const Ucp& ucp, long max_nodes = 200000);

}  // namespace qs
