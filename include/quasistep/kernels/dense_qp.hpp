// Dense convex quadratic programming with a positive SEMI-definite Hessian: a primal
// active-set method with inertia control, exact on singular reduced Hessians.
//
// Problem:
//     minimize  1/2 x'H x + c'x   subject to   A_eq x = b_eq,   A_in x >= b_in,
//                                              lower <= x <= upper,
// with H n x n symmetric positive semidefinite (typically zero outside a few variables),
// A_eq me x n, A_in mi x n dense, bounds that may be -inf / +inf (lower == upper fixes a
// variable). Bounds are constraints of their own (normals +-e_j), not rows of A_in.
//
// Method.
//  - Phase 1 (cold start): the DenseLp kernel finds a basic feasible solution of the same
//    constraints (inequality rows get slack columns  A_in x - s = 0,  s >= b_in; objective
//    0, or c'x with DenseQpOptions::phase1_minimizes_c). `infeasible` comes with the LP's
//    Farkas certificate, translated to the rows of this problem (verify_qp_farkas). An
//    `unbounded` LP still returns a feasible point. The LP's final basis names the first
//    working set: every equality, every fixed variable, every nonbasic slack (an active row)
//    and every nonbasic variable at a bound, in that order (a vertex when the constraints
//    have rank n).
//  - Phase 2: the primal active-set method of Nocedal & Wright, "Numerical Optimization",
//    2nd ed. (2006), Algorithm 16.3, in the null-space form of their sec. 16.5, with the
//    inertia control of Gill, Murray, Saunders & Wright, "Inertia-controlling methods for
//    general quadratic programming", SIAM Review 33(1), 1991, which is what makes a singular
//    reduced Hessian exact rather than regularised:
//      * the working set W (linearly independent normals, t of them) is kept as
//        A_W' = Y R with Q = [Y Z] orthogonal (n x n, explicit) and R t x t upper
//        triangular; a constraint is added or deleted with Givens rotations (Gill, Golub,
//        Murray & Saunders, "Methods for modifying matrix factorizations", Math. Comp. 28,
//        1974), O(n^2) each;
//      * the reduced Hessian Z'HZ is kept positive definite at every iterate that starts an
//        iteration, as a Cholesky factor L L' updated with the same rotations;
//      * from such an iterate the step is Newton's in the null space,
//        p = -Z (Z'HZ)^-1 Z'g  (g = H x + c), cut by the ratio test at the first blocking
//        constraint, which joins W; a full step reaches a minimizer on the subspace of W;
//      * at a subspace minimizer the multipliers solve R lambda = Y'g. When all those of
//        inequalities and active bounds are >= 0 the point is optimal. Otherwise the
//        constraint with the most negative scaled multiplier leaves W. The reduced Hessian
//        then gains one row and column; its new Schur complement
//        sigma = z'Hz - |L^-1 Z'Hz|^2  (z the new column of Z) is the curvature d'Hd of
//        d = Z u, u = [-L^-T L^-1 Z'Hz; 1], the one direction it can have made flat, and the
//        curvature of d/|d| decides:
//          sigma > curvature_tol * trace(H) * |u|^2: still positive definite, Newton next;
//          otherwise: singular, and d is the exact direction of zero curvature
//          (Z'HZ u = sigma e_last ~ 0, hence H d = 0 for PSD H), signed to
//          move off the deleted constraint, which is a descent direction (g'd =
//          lambda_s a_s'd < 0). Along d the objective is linear: the step goes to the first
//          blocking constraint, whose normal is not orthogonal to d, so adding it makes the
//          reduced Hessian positive definite again (GMSW91's inertia argument). With no blocking
//          constraint the QP is unbounded and d is its ray (H d = 0, A_eq d = 0, active and
//          blocking rows a'd >= 0, c'd = g'd < 0); so it is, within verify_qp_ray's
//          tolerances, when the only blocking rows have a'd >= -1e-9 |a S^-1|_1 max|S d| (which
//          would otherwise send x absurdly far, where c'd = g'd - x'Hd is lost to rounding).
//        No multiple of the identity is ever added to H or Z'HZ.
//  - A start point where Z'HZ is singular (for example an LP point that is not a vertex, or a
//    warm working set) is made inertia-controlled with temporary constraints (the artificial
//    constraints of inertia-controlling methods, GMSW91): a diagonally pivoted Cholesky
//    factorization of Z'HZ gives a basis D of its null space, and the constraints
//    d_k'x = d_k'x (now) join W. They are not part of the problem: their multipliers may
//    have either sign, any nonzero one makes them leave W (they are never added back), at
//    the optimum they have zero multipliers (checked) and they are not reported.
//  - At a subspace minimizer whose reduced gradient Z'g is not below multiplier_tol (a
//    Newton step through an ill-conditioned Z'HZ) one more Newton step refines it before the
//    multipliers are trusted.
//  - Degeneracy: the ratio test is Harris' two-pass test (Harris, Math. Prog. 5, 1973; a
//    relaxation of 1e-2 of the feasibility tolerance; among the candidates the largest
//    normalised |a'p|). After DenseQpOptions::degenerate_steps_before_bland consecutive
//    zero-length steps, a smallest-index rule in the manner of Bland (Math. Oper. Res. 2(2),
//    1977) takes over until the next step of positive length: the smallest constraint index
//    leaves among the negative multipliers, the smallest index joins among the tied
//    blocking constraints. (Bland proved this terminates for the simplex method, which is
//    what phase 2 is at vertices with H = 0; for the general active-set QP it is the
//    anti-cycling safeguard, and max_iterations the backstop.)
//  - Q, R and L are recomputed from scratch every refactor_interval working-set changes, and
//    whenever the final check fails after updates (then the iteration continues).
//
// Constraint indices (working sets, Bland's order): equalities 0..me-1, inequality rows
// me..me+mi-1, lower bounds me+mi+j, upper bounds me+mi+n+j, temporary constraints after.
//
// Every result is checked before it is reported (qp_kkt_residual's measure, on this solve's
// own copy of the data: never on factors carried from an earlier solve):
// `solved` means x, the multipliers y (equalities), z (inequality rows) and w (bounds,
// signed: w_j >= 0 at a lower bound, <= 0 at an upper bound, 0 strictly between) satisfy,
// with s_p = 1 + max(|b_eq|, |b_in|, finite |bounds|) + (1 + max|A|) |x|_inf and
// s_d = 1 + |c|_inf + max|H| |x|_inf + max|A| max(|y|, |z|)_inf + |w|_inf,
//     primal feasibility   each row's |A_eq x - b_eq|_i or (b_in - A_in x)_i+ <= tol (1 + |b_i|
//                          + sum_j |A_ij x_j|), each bound's violation <= tol (1 + |bound|)
//                          (row by row: with s_p, one huge entry of x would excuse an O(1)
//                          violation of a row it is not in),
//     stationarity         |H x + c - A_eq'y - A_in'z - w|_inf                  <= tol s_d,
//     dual signs           (-z_i)+, the wrong-signed part of w_j                 <= tol s_d,
//     complementarity      |z_i (A_in x - b_in)_i|, |w_j| |x_j - its bound|      <= tol s_p s_d,
// tol = DenseQpOptions::kkt_tol (1e-9); the largest of these ratios is stats().residual.
// (z >= 0 and the signs of w hold exactly in what is returned: multipliers of the wrong sign
// but within the multiplier tolerance are set to zero before the check.) `infeasible`
// means verify_qp_farkas accepted the certificate; `unbounded` means verify_qp_ray accepted
// the ray and the point it starts from is feasible. Otherwise numerical_failure.
//
// Kernel rules (quasistep/kernels/status.hpp): never throws, never prints, deterministic (every choice
// is a function of the data; ties go to the smallest index); all storage is sized once in
// the constructor from a DenseQpCapacity and solve() allocates nothing
// (tests/kernels/dense_qp_allocation_test.cpp). Views must be of double matrices/vectors
// (a view of another type would make Eigen copy, and allocate, on the caller's side).
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <cstdint>
#include <vector>

#include "quasistep/kernels/dense_lp.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

/// Non-owning views of  min 1/2 x'Hx + c'x  s.t.  A_eq x = b_eq,  A_in x >= b_in,
/// lower <= x <= upper. Sizes: H n x n, c n, A_eq me x n, b_eq me, A_in mi x n, b_in mi,
/// lower and upper n each, or both empty (no bounds). me and mi may be 0 (an empty matrix
/// with n columns, or 0 x 0).
struct DenseQpProblem {
  Eigen::Ref<const Eigen::MatrixXd> H;
  Eigen::Ref<const Eigen::VectorXd> c;
  Eigen::Ref<const Eigen::MatrixXd> A_eq;
  Eigen::Ref<const Eigen::VectorXd> b_eq;
  Eigen::Ref<const Eigen::MatrixXd> A_in;
  Eigen::Ref<const Eigen::VectorXd> b_in;
  Eigen::Ref<const Eigen::VectorXd> lower;
  Eigen::Ref<const Eigen::VectorXd> upper;
};

/// Where a variable's bounds stand in a working set.
enum class QpBoundState : std::uint8_t {
  inactive,  // neither bound in the working set
  at_lower,  // the lower bound is (also a fixed variable, lower == upper)
  at_upper,  // the upper bound is
};

/// A working set: which inequality rows and bounds are held active, and the point they were
/// active at. Equalities are always in a working set and are not listed. Storage is sized
/// by the constructor; rows/cols say which part is in use.
struct QpWorkingSet {
  QpWorkingSet() = default;
  /// Storage for up to max_in_rows inequality rows and max_vars variables.
  QpWorkingSet(int max_in_rows, int max_vars)
      : rows(max_in_rows), cols(max_vars), active(max_in_rows, 0),
        bound(max_vars, QpBoundState::inactive), x(Eigen::VectorXd::Zero(max_vars)) {}

  int rows = 0;                       // mi of the problem the set belongs to
  int cols = 0;                       // n
  std::vector<std::uint8_t> active;   // active[i], i < rows: inequality row i is in the set
  std::vector<QpBoundState> bound;    // bound[j], j < cols
  Eigen::VectorXd x;                  // the point (first cols entries), when has_point
  bool has_point = false;
  /// The point and the set come from a neighbouring problem (the last time step's answer,
  /// its data since moved), not from this one's matrices: a listed constraint the point
  /// does not hold may still be active at this problem's optimum (see solve(p, ws)).
  bool point_is_guess = false;
};

/// What happened to a warm start request.
enum class QpWarmStart : std::uint8_t {
  not_requested,        // solve(p): a cold start
  accepted,             // phase 2 started from the given working set
  rejected_invalid,     // sizes did not match: cold start
  rejected_infeasible,  // no feasible start from the set (see solve(p, ws)): cold start
  abandoned,            // accepted, but phase 2 from it failed its final check: cold start
  hot,                  // solve_hot: phase 2 started from the last solve's own factorization
};

/// Sizes fixed at construction; the workspace is allocated once for them.
struct DenseQpCapacity {
  int vars = 96;      // max n
  int eq_rows = 64;   // max me
  int in_rows = 200;  // max mi
};

struct DenseQpOptions {
  int max_iterations = 0;  // active-set iterations (steps, deletions); 0: 50 (n + me + mi) + 1000
  double kkt_tol = 1e-9;   // the final check, see the file comment
  /// Feasibility of a warm start's point, relative to s_p (file comment); the Harris ratio
  /// test relaxes bounds by 1e-2 of this.
  double feasibility_tol = 1e-9;
  /// A direction d whose curvature d'Hd / |d|^2 is <= curvature_tol * trace(H) is flat: it
  /// is stepped along, never regularised (trace(H) >= |H|_2 for PSD H). The same bound
  /// on the pivots of a fresh, diagonally pivoted factorization of Z'HZ decides its rank.
  double curvature_tol = 1e-10;
  /// A multiplier lambda_i of an inequality or bound with lambda_i |a_i| < -multiplier_tol *
  /// (1 + |g|_inf) is negative (the constraint may leave W); a temporary constraint leaves
  /// when |lambda_i| exceeds the same.
  double multiplier_tol = 1e-10;
  /// A constraint blocks a step p only when a'p < -pivot_tol |a| |p|; a constraint whose
  /// normal has |Z'a| <= dependency_tol |a| is linearly dependent on W and is not added.
  double pivot_tol = 1e-9;
  double dependency_tol = 1e-10;
  /// 0: Bland's rule always (correct but slow: on random 96-variable problems it can take
  /// more than the default iteration limit).
  int degenerate_steps_before_bland = 10;
  int refactor_interval = 50;              // working-set changes between refactorizations
  /// Check that H is positive semidefinite before solving (one diagonally pivoted Cholesky
  /// of the block of H on the variables it touches): bad_input when, after the pivots
  /// above curvature_tol * trace(H), a Schur complement entry of magnitude > 1e-9 trace(H)
  /// remains (for PSD H they are all below the pivot threshold).
  bool check_psd = true;
  /// Phase 1's LP objective: false (default), none (the first feasible basis of the LP's
  /// own phase 1); true, c'x (an LP optimum; for H = 0 the answer itself). On the random
  /// 96-variable, 204-row problems of bench/bench_dense_qp, false takes ~230 LP pivots and
  /// ~300 active-set iterations, true ~410 and ~270, and false is ~40% faster overall.
  bool phase1_minimizes_c = false;
  bool timing = false;    // fill SolverStats::seconds
  DenseLpOptions lp = {};  // phase 1
};

/// The primal part of qp_kkt_residual: each row's violation against its own terms (1 + |b_i|
/// + sum_j |A_ij x_j|), each bound's against 1 + |bound|; the largest ratio. +inf on
/// malformed sizes or a non-finite x. Allocates nothing.
double qp_primal_residual(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& x);

/// The scaled KKT residual of (x, y, z, w) for p (see the file comment): the largest of the
/// primal, stationarity, sign and complementarity ratios (a w_j > 0 with lower_j = -inf, or
/// < 0 with upper_j = +inf, is a sign violation). +inf on malformed sizes or non-finite
/// values. Allocates nothing.
double qp_kkt_residual(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& x,
                       const Eigen::Ref<const Eigen::VectorXd>& y,
                       const Eigen::Ref<const Eigen::VectorXd>& z,
                       const Eigen::Ref<const Eigen::VectorXd>& w);

/// Checks a Farkas certificate (u_eq, u_in) of infeasibility of the constraints of p: u_in
/// >= 0 and, with g = A_eq'u_eq + A_in'u_in,
///     gap = b_eq'u_eq + b_in'u_in - sum_j max { g_j x_j : lower_j <= x_j <= upper_j }  >  0,
/// evaluated as verify_farkas does (on u / max|u|; a g_j whose maximum would be infinite
/// counts as zero when |g_j| <= tol max(sum_i |u_i A_ij|, sum_{i: |u_i| > 1e-3} |A_ij|) or <= 64
/// eps sum_i |A_ij|; the gap must exceed tol times the sum of the magnitudes of its terms and
/// 64 eps sum_i |u_i| (1 + |b_i|)). H and c are ignored. False on malformed input.
bool verify_qp_farkas(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& u_eq,
                      const Eigen::Ref<const Eigen::VectorXd>& u_in, double tol = 1e-9);

/// Checks an unbounded ray d of p in the variables x~_j = s_j x_j, s_j a power of two near
/// max_i |A_ij| (sqrt(H_jj) for a variable no row holds, else 1): the problem there has
/// rows A~ = A S^-1, c~ = S^-1 c, H~ = S^-1 H S^-1, and the ray e = S d / max|S d|, so that
/// the verdict is the same in any units of the variables (each row test is relative to its
/// own entries, so in any unit of the rows too). |(A~_eq e)_i| <= tol sum_j |A~_ij|;
/// (A~_in e)_i >= -tol sum_j |A~_ij|; e_j > tol only where upper_j = +inf and e_j < -tol only
/// where lower_j = -inf; zero curvature e'H~e <= tol trace(H~) |e|_2^2 (for PSD H,
/// |(H~e)_i| <= sqrt(H~_ii e'H~e): H d = 0 to that order); and a descent c~'e < -tol
/// sum_j |c~_j|. (On d / max|d| instead, a ray that turns a box by 1 rad while its rows'
/// lever arms are 1e-7 length units long passed rows it violated, and one that pushed it
/// through the floor in lengths 2^40 as well.) Feasibility of p itself is not part of this
/// check. False on malformed input.
bool verify_qp_ray(const DenseQpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& d,
                   double tol = 1e-9);

/// The solver and its workspace. One instance serves any number of problems within its
/// capacity, one at a time (not thread-safe). The results of the last solve stay readable
/// until the next call.
class DenseQp {
 public:
  explicit DenseQp(const DenseQpCapacity& capacity = {}, const DenseQpOptions& options = {});

  /// Cold start: phase 1 (DenseLp), then phase 2.
  /// Status: solved; infeasible (farkas_eq(), farkas_in()); unbounded (ray() from x());
  /// iteration_limit (the phase-1 LP's or phase 2's; stats().has_point when x() is
  /// feasible, i.e. in phase 2); numerical_failure (the LP's, a check that failed after a
  /// fresh factorization, or a factorization that could not be made inertia-controlled);
  /// bad_input (sizes, NaN/Inf in H, c, A or b, a NaN bound, lower > upper, lower = +inf or
  /// upper = -inf, n = 0, more variables/rows than the capacity, H not symmetric to
  /// 1e-12 max|H_ij|, or not positive semidefinite when options().check_psd).
  Status solve(const DenseQpProblem& p);
  /// Warm start from a working set, e.g. working_set() of an earlier solve of a problem with
  /// the same n (a branch-and-bound child: the same matrices plus equality rows, fixed
  /// variables or tighter bounds; inequality rows beyond ws.rows start inactive).
  ///  1. W = the equalities and fixed variables, then the set's rows and bounds, each only
  ///     if linearly independent of those before (and, when the set has a point, active
  ///     there: listed constraints the point does not hold are stale and left out).
  ///  2. With a point (has_point, as every working_set() has): the constraints it violates
  ///     (the child's new equalities, fixings, bounds) are reached one at a time by a
  ///     repair walk that keeps W active and every satisfied constraint satisfied (ratio
  ///     test): the least-norm move in W's null space, a blocking constraint joining W; a
  ///     target dependent on W makes the inequality of W it depends on most, with a
  ///     multiplier of the right sign, leave (a dual simplex step). No such inequality
  ///     proves the problem infeasible (the target's normal is a combination of W's whose
  ///     every inequality multiplier has the wrong sign: that combination is a Farkas
  ///     vector); if verify_qp_farkas accepts it the solve ends `infeasible` with no
  ///     phase-1 LP (a branch-and-bound's empty children mostly end here). Otherwise, or
  ///     after 4n + 10 steps, the warm start is given up.
  ///  3. The point is projected onto {a_i'x = b_i, i in W} (the whole move without a point:
  ///     from the origin), temporary constraints make Z'HZ positive definite, and the
  ///     minimizer on W is tried: phase 2 starts there if it satisfies every constraint to
  ///     feasibility_tol (re-solving at an optimal set then takes 0 iterations), else from
  ///     the projected point if that does, else the solve is a cold start.
  ///  4. A phase 2 from the warm start that ends numerical_failure or iteration_limit is
  ///     retried once cold (warm_start() == abandoned).
  /// A guessed point (ws.point_is_guess) is tried first as the start of a set without a
  /// point: every listed constraint joins W and the point is projected onto W (a small
  /// move when the data moved little; listed rows a moved point no longer holds are kept).
  /// Its start must hold every row and bound as the final check measures them (row by row,
  /// to feasibility_tol).
  /// When neither the projection nor the minimizer on W is feasible, steps 1-3 follow.
  /// warm_start() says which happened.
  Status solve(const DenseQpProblem& p, const QpWorkingSet& warm);
  /// Hot start: as solve(p, warm), but first from this solver's own factorization of the
  /// last problem it solved (Q, R, W and x kept from its end), when that solve ended
  /// `solved`, or `infeasible` by the repair walk's proof (not a phase-1 LP's: the walk
  /// leaves W active at x, the sibling of an empty child starts there), with the same n
  /// and number of inequality rows. The caller vouches that p keeps
  /// every constraint normal of the last problem: the same inequality rows and bounds as
  /// vectors (values of bounds and right-hand sides may change; an infinite bound drops
  /// out), and equality row k of the last problem is row eq_from_last[k] of p (-1: gone;
  /// eq_from_last may be null when the last problem had no equality rows;
  /// p may add rows); H and c may change. W is renamed to p's numbering (what is gone or no
  /// longer held at x leaves it), then steps 2-4 of the warm start follow (the repair walk
  /// to p's new constraints). A branch-and-bound child from its parent's or its sibling's
  /// factorization then costs a few updates instead of building W again. If the hot start
  /// fails, solve(p, warm) follows. The result is checked as always (a broken promise costs
  /// time, not a wrong answer: the check is on p's data). warm_start() == hot when used.
  Status solve_hot(const DenseQpProblem& p, const QpWorkingSet& warm, const int* eq_from_last);

  /// After a solve of p that ended `solved` (p the same problem, which is not checked again):
  /// whether x() is also optimal for p with some equalities relaxed to inequalities:
  /// equality row k to A_eq_k x >= b_eq_k where relax_eq[k] != 0 (k < me), and a fixed
  /// variable j (lower_j == upper_j) to x_j >= lower_j where relax_fixed[j] != 0 (j < n;
  /// either pointer may be null: none). x does not move: from the final working set, a
  /// constraint whose multiplier has the wrong sign for the relaxed problem leaves W, and a
  /// constraint active at x that blocks the direction this opens joins it at step length
  /// zero (the degenerate steps phase 2 would take); where a join leaves x off the
  /// minimizer on W (H != 0), the Newton step on W must be blocked at once too. At most
  /// 2n + 10 exchanges, the smallest-index rule after degenerate_steps_before_bland of them.
  /// True when every multiplier then has its sign (the solver's own optimality test); the
  /// outputs y(), z(), bound_multipliers() and working_set() are then those of x for the
  /// relaxed problem (a relaxed row's y_k >= 0, a relaxed variable's w_j >= 0), for the
  /// caller to check against the relaxed problem's own data (qp_kkt_residual). False when a
  /// direction of descent leaves x, on the exchange limit, or after any status but solved;
  /// the outputs are then the solve's, and so is W (the exchanges are undone: a hot start
  /// may follow as after the solve). Why: at a degenerate optimum the multipliers of W are
  /// one choice among many (a constraint dependent on W and active at x was left out of it),
  /// so one of the wrong sign does not show that x is not optimal once relaxed; Pang & Tedrake 2018's
  /// lift steps, where two fingers pin the object from both sides, are such a case
  /// (core/formulations/pang_tedrake_miqp/pang_tedrake_miqp_problem.hpp). After true the next solve does not start hot from this one.
  /// Allocates nothing.
  bool optimal_when_relaxed(const DenseQpProblem& p, const std::uint8_t* relax_eq, const std::uint8_t* relax_fixed);

  // ---- results of the last solve ------------------------------------------------------
  Status status() const { return status_; }
  /// iterations: phase-2 iterations (working-set changes and steps); phase1_pivots() the LP's.
  const SolverStats& stats() const { return stats_; }
  int phase1_pivots() const { return lp_pivots_; }
  /// Temporary constraints created in the last solve (0 when every start was a vertex or had
  /// a positive definite reduced Hessian).
  int temporary_constraints() const { return temporaries_made_; }
  QpWarmStart warm_start() const { return warm_; }

  /// solved: the optimum; unbounded: the feasible point the ray starts from; infeasible:
  /// the LP's last phase-1 iterate (or the warm start's repair point, when the repair
  /// proved it); other statuses: the last iterate.
  Eigen::Map<const Eigen::VectorXd> x() const { return {x_out_.data(), n_}; }
  double objective() const { return objective_; }
  /// Multipliers (solved): y of the equalities (me), z >= 0 of the inequality rows (mi), and
  /// the signed bound multipliers w (n); H x + c = A_eq'y + A_in'z + w.
  Eigen::Map<const Eigen::VectorXd> y() const { return {y_out_.data(), me_}; }
  Eigen::Map<const Eigen::VectorXd> z() const { return {z_out_.data(), mi_}; }
  Eigen::Map<const Eigen::VectorXd> bound_multipliers() const { return {w_out_.data(), n_}; }
  /// infeasible: the certificate accepted by verify_qp_farkas.
  Eigen::Map<const Eigen::VectorXd> farkas_eq() const { return {farkas_.data(), me_}; }
  Eigen::Map<const Eigen::VectorXd> farkas_in() const { return {farkas_.data() + me_, mi_}; }
  /// unbounded: the ray accepted by verify_qp_ray, from x().
  Eigen::Map<const Eigen::VectorXd> ray() const { return {ray_.data(), n_}; }
  /// The final working set (solved, unbounded, iteration_limit; temporary constraints are
  /// not part of it) with x(): pass it to solve() to warm start.
  const QpWorkingSet& working_set() const { return ws_; }

  DenseQpOptions& options() { return opt_; }
  const DenseQpOptions& options() const { return opt_; }
  const DenseQpCapacity& capacity() const { return cap_; }

 private:
  struct Ratio {
    double alpha = 0;  // step length
    int id = -1;       // blocking constraint, -1 when none
  };

  // What a hot start needs of the last solve (run() reads it before begin()).
  struct Hot {
    bool ready;
    int n, me, mi, t, changes;
  };

  Status run(const DenseQpProblem& p, const QpWorkingSet* warm, bool hot = false, const int* eq_from_last = nullptr);
  Status check_problem(const DenseQpProblem& p);
  void begin(const DenseQpProblem& p);
  void load_rows(const Eigen::Ref<const Eigen::MatrixXd>& A, int off);  // A's rows as rows off..
  Status cold_start();
  /// project_guess: ws.point as the origin of a start without a point (ws.point_is_guess).
  bool try_warm_start(const QpWorkingSet& ws, const Hot* hot = nullptr, const int* eq_from_last = nullptr,
                      bool project_guess = false);
  bool keep_last_working_set(const Hot& last, const int* eq_from_last);  // hot: rename W
  bool repair(int id);  // warm start: make a violated constraint active, feasibly
  void record_repair_proof(int id, double sign);  // repair's infeasibility proof -> farkas_
  Status phase2();
  Status finish_optimal(bool& retry);
  Status finish_unbounded();
  void write_outputs(bool multipliers);

  // Constraints by index.
  int first_lower() const { return me_ + mi_; }
  int first_upper() const { return me_ + mi_ + n_; }
  int first_temp() const { return me_ + mi_ + 2 * n_; }
  bool is_row(int id) const { return id < me_ + mi_; }
  bool is_equality(int id) const;  // equality rows and fixed variables' lower bounds
  double dot_normal(int id, const double* v) const;
  void load_normal(int id, double* out) const;
  double rhs(int id) const;
  double normal_norm(int id) const;
  double residual(int id) const;  // a'x - b at x_
  double row_dot(int i, const double* v) const;  // a_i'v (over its nonzeros when sparse)
  // A row whose products go over its nonzeros alone (else dense, on explicit vectors).
  bool row_sparse(int i) const { return 4 * row_nnz_[i] <= n_ + 16; }
  double primal_scale_at(const double* x) const;      // s_p at x (see the check above)
  double primal_violation_at(const double* x) const;  // the largest violation (unscaled)
  double row_violation_at(const double* x) const;     // the final check's primal part: row by row
  double kkt_residual_of_outputs();  // qp_kkt_residual of the outputs, on the copied data

  // Factorization.
  void reset_factors();
  bool add_constraint(int id, bool update_l);
  void delete_constraint(int pos);
  bool border_new_column();  // after delete: true when Z'HZ stays positive definite
  bool refactor(bool allow_temporaries);
  bool rebuild_qr();
  bool factor_reduced_hessian(bool allow_temporaries);
  void compute_reduced_hessian();
  int pivoted_cholesky_of_reduced_hessian();  // on L_ (holding Z'HZ), permuting Z: rank
  bool check_l_diagonal() const;

  // Steps.
  void h_times(const double* v, double* out);  // out = H v (n)
  void compute_gradient();
  void newton_step();
  void zero_curvature_direction(int deleted_id);
  Ratio ratio_test(double cap);
  bool is_ray();  // after ratio_test: the direction passes verify_qp_ray's tolerances (hv_: scratch)
  void take_step(const Ratio& r);
  void compute_multipliers();
  int choose_deletion() const;
  bool psd_ok();

  int zcol(int r) const { return n_ - 1 - r; }  // reduced index r <-> column of Q

  DenseQpCapacity cap_;
  DenseQpOptions opt_;
  DenseLp lp_;

  const DenseQpProblem* p_ = nullptr;
  int n_ = 0, me_ = 0, mi_ = 0;
  int t_ = 0;   // |W|
  int nz_ = 0;  // n - t: columns of Z
  double max_a_ = 0, max_b_ = 0, max_h_ = 0, max_c_ = 0;  // max|A|, max|b|, max|H|, |c|_inf
  double max_bound_ = 0;  // the largest finite |bound|
  double trace_h_ = 0;    // trace(H) >= |H|_2 for PSD H
  double zero_curv_ = 0;  // curvature_tol * trace(H)
  int hk_ = 0;  // variables touched by H

  // What the last begin() took, so that a problem with the same H or A_in (bitwise; a
  // branch-and-bound's nodes differ in equality rows and bounds only) skips their checks
  // and keeps what begin() derived from them: for H its scale, hk_, hidx_, Hs_, trace_h_
  // and the positive semidefinite verdict; for A_in its scale and the inequality rows'
  // columns of N_ with their nonzeros and norms, which sit at offset in_at_.
  Eigen::MatrixXd seen_h_, seen_a_in_;
  int seen_h_n_ = -1, seen_in_rows_ = -1, seen_in_cols_ = -1;
  double seen_max_h_ = 0, seen_max_a_in_ = 0, max_a_in_ = 0;
  double psd_checked_at_ = -1.0;  // zero_curv_ at which seen_h_ passed psd_ok (-1: none)
  int in_at_ = -1;                // -1: N_ holds no inequality rows
  bool same_h_ = false, same_a_in_ = false;  // check_problem's verdicts, for begin()

  // Workspace (sized in the constructor).
  Eigen::MatrixXd Q_;       // vars x vars: [Y Z], Z in reverse (reduced index r: column n-1-r)
  Eigen::MatrixXd R_;       // vars x vars: upper triangular t x t
  Eigen::MatrixXd L_;       // vars x vars: Cholesky factor of Z'HZ (lower), or Z'HZ itself
  Eigen::MatrixXd N_;       // vars x (eq_rows + in_rows): the normals of the rows, as columns
  Eigen::MatrixXd T_;       // vars x vars: unit normals of the temporary constraints
  Eigen::MatrixXd Hs_;      // vars x vars: H on the variables it touches
  Eigen::MatrixXd HZ_;      // vars x vars: H Z on those variables (refactorization)
  Eigen::MatrixXd ZS_;      // vars x vars: Z on those variables (refactorization)
  Eigen::VectorXd row_norm_, b_all_, res_, s_;  // rows: |a_i|_2, b, a'x - b, a'p
  // Each row's nonzero columns, increasing (row i at i * vars): contact rows touch a few of
  // the variables, so products with a row's normal go over those alone.
  std::vector<int> row_nz_, row_nnz_;
  Eigen::VectorXd t_rhs_;               // vars: temporary constraints' right-hand sides
  Eigen::VectorXd lower_, upper_;       // vars: the bounds (infinite when the problem has none)
  Eigen::VectorXd x_, g_, step_, u_, v_, w_, hv_;  // vars
  Eigen::VectorXd lam_;                         // vars: multipliers of W, in W's order
  Eigen::VectorXd gather_, scatter_;            // vars: H v on the variables H touches
  std::vector<int> work_;      // vars: W in R's column order
  std::vector<int> saved_;     // vars: W during a refactorization
  std::vector<unsigned char> in_w_;  // constraint index -> in W
  std::vector<unsigned char> t_used_;  // temporary slot -> in use
  std::vector<int> hidx_;      // vars: the variables H touches
  std::vector<int> candidate_;  // rows + 2 vars: the ratio test's blocking candidates
  std::vector<int> piv_;       // vars: pivoted Cholesky's swaps
  Eigen::MatrixXd A_lp_;       // (eq_rows + in_rows) x (vars + in_rows)
  Eigen::VectorXd b_lp_, c_lp_, lo_lp_, up_lp_;
  Eigen::VectorXd x_out_, y_out_, z_out_, w_out_, farkas_, ray_;
  QpWorkingSet ws_;

  Status status_ = Status::not_run;
  SolverStats stats_;
  QpWarmStart warm_ = QpWarmStart::not_requested;
  double objective_ = 0;
  int lp_pivots_ = 0;
  int temporaries_made_ = 0;
  int max_iterations_ = 0;
  int changes_since_refactor_ = 0;
  int degenerate_steps_ = 0;
  bool at_minimizer_ = false;
  bool singular_ = false;  // Z'HZ has a zero last pivot (inside one iteration only)
  bool repair_proof_ = false;  // the last warm start's repair left a Farkas vector in farkas_
  bool hot_ready_ = false;     // the last solve ended solved or repair-proved infeasible:
                               // its Q, R, W and x can start a hot one
  // optimal_when_relaxed(): equality rows treated as inequalities (all 0 outside it), and
  // whether the ratio test then looks at equality rows too.
  std::vector<unsigned char> relaxed_;
  bool relaxing_ = false;
  std::vector<int> exchanged_;  // its exchanges (left, joined), to undo them
};

}  // namespace qs
