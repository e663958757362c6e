// Dense linear programming: a bounded primal simplex on an explicit basis inverse.
//
// Problem (the "bounded standard form"):
//     minimize  c'x   subject to   A x = b,   lower <= x <= upper,
// with A dense m x n and bounds that may be -inf / +inf (a free variable has both infinite).
// Inequality rows are turned into equalities with slack columns; row_bounds_to_standard_form
// below does it for rows  row_lower <= A x <= row_upper  (so A x >= b is row_upper = +inf).
//
// Method (Chvatal, "Linear Programming", 1983: ch. 3 for the two phases, ch. 8 for the
// simplex method with upper and lower bounds; Dantzig 1963 for the revised form):
//  - the problem is first equilibrated (rows, then columns, scaled by powers of two: exact),
//    solved scaled, and unscaled; the checks below are made on the original data;
//  - revised simplex with an explicit basis inverse B^-1, updated by one rank-one (eta)
//    update per pivot and recomputed from scratch (Gauss-Jordan, partial pivoting) every
//    DenseLpOptions::refactor_interval pivots and before every termination decision;
//  - nonbasic variables sit at a bound (a free nonbasic variable sits at 0); a step that
//    reaches the entering variable's own opposite bound first is a "bound flip" (no basis
//    change);
//  - phase 1 minimizes the sum of |artificials|, one artificial (the "logical" column e_i)
//    per row that a singleton column (e.g. a slack) cannot cover ("slack crash"); an
//    artificial that leaves the basis is fixed at 0; at the end of phase 1 the artificials
//    still basic (at 0 to within the feasibility tolerance) are pivoted out, each fixed at
//    the value it has (so the basic values do not move and the row holds to that
//    tolerance), except in rows that are linearly dependent on the others, where they stay
//    basic with bounds [0, 0];
//  - the ratio test is Harris' two-pass test (Harris 1973: among the rows blocking within a
//    tiny relaxation of the bounds, the largest |pivot|), for stability;
//  - pricing is Dantzig's largest reduced cost; after
//    DenseLpOptions::degenerate_pivots_before_bland consecutive degenerate pivots the
//    solver switches to Bland's rule (Bland, "New finite pivoting rules for the simplex
//    method", Math. Oper. Res. 2(2), 1977: smallest index entering, smallest index leaving
//    among ties), which cannot cycle, until the next nondegenerate pivot;
//  - when phase 1 ends with a positive sum of artificials, its dual vector y is a Farkas
//    certificate (Farkas' lemma in the bounded form, Chvatal ch. 9 / Schrijver, "Theory of
//    Linear and Integer Programming", cor. 7.1e): y'b > max { y'A x : lower <= x <= upper }.
//
// Every result is checked before it is reported: `solved` means the returned x satisfies
// |A x - b| and the bounds to feasibility_tol * (1 + max|b| + max|A| max|x|) and the reduced
// costs d = c - A'y have the signs of optimality to optimality_tol * (1 + max|c| + max|A|
// max|y|); `infeasible` means verify_farkas accepted the certificate; `unbounded` means
// verify_ray accepted the ray and x is feasible. Otherwise the status is numerical_failure.
//
// Kernel rules (quasistep/kernels/status.hpp): never throws, never prints, deterministic; all storage
// is sized once in the constructor from a DenseLpCapacity and solve / the adjacency
// functions allocate nothing (tests/kernels/dense_lp_allocation_test.cpp). The problem is
// passed as Eigen::Ref views of double matrices/vectors; a view of a different scalar type
// or of an expression would make Eigen copy it (and allocate) on the caller's side.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "quasistep/kernels/status.hpp"

namespace qs {

/// Non-owning views of  minimize c'x  s.t.  A x = b,  lower <= x <= upper.
/// Sizes: A m x n, b m, c n, lower n, upper n. Bounds may be -inf/+inf; lower <= upper.
/// (The adjacency functions, which ignore the objective except to report it, accept an
/// empty c.)
struct DenseLpProblem {
  Eigen::Ref<const Eigen::MatrixXd> A;
  Eigen::Ref<const Eigen::VectorXd> b;
  Eigen::Ref<const Eigen::VectorXd> c;
  Eigen::Ref<const Eigen::VectorXd> lower;
  Eigen::Ref<const Eigen::VectorXd> upper;
};

/// Where a column sits relative to a basis.
enum class LpVarState : std::uint8_t {
  basic,     // in the basis
  at_lower,  // nonbasic at its lower bound (also a fixed variable, lower == upper)
  at_upper,  // nonbasic at its upper bound
  at_zero,   // nonbasic free variable (both bounds infinite), held at 0
};

/// A simplex basis of an m x n problem. Columns j < n are the structural columns of A;
/// column n + i is the "logical" column e_i of row i, which a basis contains only for a row
/// that is linearly dependent on the others (the logical is then fixed at 0).
/// Storage is sized by the constructor; rows/cols say which part is in use.
struct LpBasis {
  LpBasis() = default;
  /// Storage for problems up to max_rows x max_cols; rows = max_rows, cols = max_cols.
  LpBasis(int max_rows, int max_cols)
      : rows(max_rows), cols(max_cols), head(max_rows, -1),
        state(static_cast<std::size_t>(max_cols) + max_rows, LpVarState::at_lower) {}

  int rows = 0;                   // m of the problem the basis belongs to
  int cols = 0;                   // n (structural columns) of that problem
  std::vector<int> head;          // head[i], i < rows: the column basic in row i
  std::vector<LpVarState> state;  // state[j], j < cols + rows (logicals after structurals)
};

/// One neighbour of a basic feasible solution, reported by the adjacency functions: the
/// result of moving one nonbasic column `entering` off its bound and pivoting.
struct LpNeighbour {
  int entering;     // the nonbasic column that moves
  int direction;    // +1: it increases (from lower, or from 0 if free); -1: it decreases
  int leaving;      // the column that becomes nonbasic; == entering for a bound flip
                    // (entering reaches its other bound first); -1 on an unbounded edge
  double step;      // |change of x_entering| (>= 0); +inf on an unbounded edge
  bool degenerate;  // step == 0 (to tolerance): the same point, another basis
  bool unbounded;   // the edge is a ray (no bound blocks it): `point` is the start point
  double objective;                        // c'point (0 when the problem's c is empty)
  Eigen::Map<const Eigen::VectorXd> point;  // the neighbouring point (n)
  Eigen::Map<const Eigen::VectorXd> edge;   // the edge direction (n), edge[entering] = direction
  const LpBasis& basis;  // a feasible basis of `point` (the input basis on an unbounded edge)
};

/// Sizes fixed at construction; the workspace is allocated once for them.
struct DenseLpCapacity {
  int rows = 128;  // max m
  int cols = 256;  // max n (structural columns, slacks included)
  /// for_each_adjacent_vertex: how many bases of one degenerate vertex it can visit, and
  /// how many distinct neighbours it can remember (for deduplication).
  int vertex_bases = 256;
  int vertex_neighbours = 512;
};

struct DenseLpOptions {
  int max_iterations = 0;         // pivot limit; 0: 50 (m + n) + 1000
  double feasibility_tol = 1e-9;  // relative, see the file comment
  double optimality_tol = 1e-9;   // relative, see the file comment
  double pivot_tol = 1e-9;        // |alpha_i| below pivot_tol * max(1, max|alpha|) never pivots
  /// Consecutive degenerate pivots under Dantzig's rule before Bland's rule takes over (until
  /// the next nondegenerate pivot). 0: Bland's rule always. A huge value disables the
  /// anti-cycling protection (for tests only: Hall and McKinnon's example then cycles).
  int degenerate_pivots_before_bland = 10;
  int refactor_interval = 100;  // pivots between recomputations of B^-1 from scratch
  /// Solve the problem scaled by powers of two (row, then column equilibration), then
  /// unscale; the checks of the result are always made on the original data.
  bool scale = true;
  bool timing = false;  // fill SolverStats::seconds
};

/// Checks a Farkas certificate of infeasibility of {A x = b, lower <= x <= upper} (c is
/// ignored): with g = A'y, the certificate is valid when
///     gap = y'b - sum_j max { g_j x_j : lower_j <= x_j <= upper_j }  >  0
/// (for x >= 0 this is A'y <= 0 and y'b > 0). In floating point (on y / max|y|): a g_j whose
/// maximum would be infinite counts as zero when |g_j| <= tol * max(sum_i |y_i A_ij|,
/// sum_{i: |y_i| > 1e-3} |A_ij|) (its terms cancel, or y itself is rounded at the scale of
/// its largest entry) or |g_j| <= 64 eps sum_i |A_ij| (rounding in the data of the column,
/// e.g. cos(pi/2)); the gap must exceed tol times the sum of the magnitudes of the terms
/// that make it up (sum_i |y_i b_i| + sum_j |bound_j| sum_i |y_i A_ij|) and 64 eps sum_i
/// |y_i| (1 + |b_i|) (rounding on the rows' scale: with b and the bounds used all 0, gap
/// and terms can be rounding alike). False on malformed input.
bool verify_farkas(const DenseLpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& y,
                   double tol = 1e-9);

/// Checks an unbounded ray d of  min c'x, A x = b, lower <= x <= upper  (on d / max|d|):
/// each |(A d)_i| <= tol * sum_j |A_ij d_j|; d_j > tol only where upper_j = +inf and d_j <
/// -tol only where lower_j = -inf (d is in the recession cone of the bounds); c'd < -tol *
/// sum_j |c_j d_j|. Feasibility of the LP itself is not part of this check. False on
/// malformed input.
bool verify_ray(const DenseLpProblem& p, const Eigen::Ref<const Eigen::VectorXd>& d,
                double tol = 1e-9);

/// Rows  row_lower <= A_in x <= row_upper  (an equality has row_lower == row_upper) with
/// lower <= x <= upper, written in the bounded standard form with one slack s_i per row:
///     [A_in  -I] [x; s] = 0,   [lower; row_lower] <= [x; s] <= [upper; row_upper],
/// objective [c_in; 0]. Outputs must already have their sizes (m x (n+m), m, n+m, n+m,
/// n+m); allocates nothing. bad_input on a size mismatch or row_lower > row_upper, else
/// solved. The slacks are singleton columns, so a cold start uses them as its first basis
/// wherever the starting point satisfies the row.
Status row_bounds_to_standard_form(const Eigen::Ref<const Eigen::MatrixXd>& A_in,
                                   const Eigen::Ref<const Eigen::VectorXd>& row_lower,
                                   const Eigen::Ref<const Eigen::VectorXd>& row_upper,
                                   const Eigen::Ref<const Eigen::VectorXd>& c_in,
                                   const Eigen::Ref<const Eigen::VectorXd>& lower_in,
                                   const Eigen::Ref<const Eigen::VectorXd>& upper_in,
                                   Eigen::Ref<Eigen::MatrixXd> A, Eigen::Ref<Eigen::VectorXd> b,
                                   Eigen::Ref<Eigen::VectorXd> c, Eigen::Ref<Eigen::VectorXd> lower,
                                   Eigen::Ref<Eigen::VectorXd> upper);

/// The solver and its workspace. One instance serves any number of problems within its
/// capacity, one at a time (not thread-safe; use one instance per thread). The results of
/// the last solve stay readable until the next call.
class DenseLp {
 public:
  explicit DenseLp(const DenseLpCapacity& capacity = {}, const DenseLpOptions& options = {});
  DenseLp(int max_rows, int max_cols, const DenseLpOptions& options = {});

  /// Cold start: phase 1 from the slack/artificial basis, then phase 2.
  /// Status: solved, infeasible (farkas()), unbounded (ray()), iteration_limit (past
  /// options().max_iterations pivots; stats().has_point when the iterate is feasible),
  /// numerical_failure (singular basis, or a result that failed its check), bad_input
  /// (sizes that do not match, NaN/Inf in A, b or c, a NaN bound, lower > upper, lower =
  /// +inf or upper = -inf, no columns (n = 0: the empty problem; m = 0 is allowed, a box),
  /// or more rows/columns than the capacity).
  Status solve(const DenseLpProblem& p);
  /// Warm start from `basis` (e.g. basis() of an earlier solve of a problem of the same
  /// size). If the basis is valid (sizes, distinct columns, nonsingular) and primal feasible
  /// for this problem, phase 2 starts from it (so re-solving at an optimal basis takes 0
  /// pivots); otherwise, or when phase 2 from it ends in an answer that fails its check, the
  /// solve falls back to a cold start. Nonbasic states that do not match the bounds
  /// (at_lower of an infinite lower bound, ...) are corrected silently. warm_started()
  /// tells which happened.
  Status solve(const DenseLpProblem& p, const LpBasis& basis);

  // ---- results of the last solve ------------------------------------------------------
  Status status() const { return status_; }
  const SolverStats& stats() const { return stats_; }
  /// solved: the optimum; unbounded: the feasible point the ray starts from; infeasible:
  /// the last phase-1 iterate; other statuses: the last iterate.
  Eigen::Map<const Eigen::VectorXd> x() const { return {x_out_.data(), out_n_}; }
  double objective() const { return objective_; }
  /// Equality multipliers y (m), with reduced costs d = c - A'y (n, recomputed from the
  /// original data): at the optimum d_j >= 0 where x_j is at its lower bound, <= 0 at its
  /// upper bound, 0 where x_j is between. (After infeasible: the phase-1 multipliers.)
  Eigen::Map<const Eigen::VectorXd> duals() const { return {y_out_.data(), out_m_}; }
  Eigen::Map<const Eigen::VectorXd> reduced_costs() const { return {d_out_.data(), out_n_}; }
  /// infeasible: the Farkas certificate y (m) accepted by verify_farkas.
  Eigen::Map<const Eigen::VectorXd> farkas() const { return {farkas_.data(), out_m_}; }
  /// unbounded: the ray (n) accepted by verify_ray, from x().
  Eigen::Map<const Eigen::VectorXd> ray() const { return {ray_.data(), out_n_}; }
  /// The final basis (also on infeasible/unbounded/iteration_limit): pass it to solve() to
  /// warm start, or to the adjacency functions.
  const LpBasis& basis() const { return basis_; }
  bool warm_started() const { return warm_started_; }

  // ---- adjacent extreme points --------------------------------------------------------
  // The visitor gets views into the solver's workspace, valid during the call only, and
  // must not call this DenseLp. The results of the last solve (x, basis, ...) are kept.
  /// Calls visit(const LpNeighbour&) -> bool once per possible move from the basic feasible
  /// solution `basis` of {A x = b, lower <= x <= upper}: for each nonbasic structural column
  /// that is not fixed, in increasing column order, in each direction it can move (both for
  /// a free column): the ratio test's result (leaving row: the smallest ratio, ties broken
  /// by the largest |pivot|, then the smallest column). Degenerate pivots are reported, with
  /// degenerate = true (same point, new basis); so are bound flips and unbounded edges.
  /// Stops early when visit returns false. Status: solved when done (or stopped), bad_input
  /// when the problem or basis is malformed, singular, or not primal feasible.
  template <class Visit>
  Status for_each_adjacent_basis(const DenseLpProblem& p, const LpBasis& basis, Visit&& visit) {
    return adjacent(p, basis, false, erase(visit), &call_visit<std::remove_reference_t<Visit>>);
  }
  /// The distinct neighbouring extreme points (and extreme rays, unbounded = true) of the
  /// vertex of `basis`. At a degenerate vertex one pivot does not reach every neighbour, so
  /// this walks every basis of the vertex reachable by feasible degenerate pivots (the
  /// vertex's positive degeneracy graph, which is connected: T. Gal, "Degeneracy graphs:
  /// theory and application. An updated survey", Ann. Oper. Res. 46, 1993) and reports
  /// each nondegenerate neighbour once (points within the feasibility tolerance, or rays
  /// with the same direction, are the same). A vertex can have exponentially many bases:
  /// status solved when complete; iteration_limit when the capacity (vertex_bases bases,
  /// vertex_neighbours neighbours) ran out, in which case the neighbours reported so far are
  /// genuine but may not be all; bad_input as above. Cost: one O(m^3) refactorization per
  /// basis visited, plus O(m (m + n)) per move tried.
  template <class Visit>
  Status for_each_adjacent_vertex(const DenseLpProblem& p, const LpBasis& basis, Visit&& visit) {
    return adjacent(p, basis, true, erase(visit), &call_visit<std::remove_reference_t<Visit>>);
  }

  DenseLpOptions& options() { return opt_; }
  const DenseLpOptions& options() const { return opt_; }
  const DenseLpCapacity& capacity() const { return cap_; }

 private:
  using VisitFn = bool (*)(void*, const LpNeighbour&);
  template <class F>
  static void* erase(F& f) {
    return const_cast<void*>(static_cast<const void*>(std::addressof(f)));
  }
  template <class F>
  static bool call_visit(void* f, const LpNeighbour& nb) {
    return static_cast<bool>((*static_cast<F*>(f))(nb));
  }

  struct Ratio {
    double theta = 0;     // step length of the entering variable
    int row = -1;         // leaving row; -1 with flip or unbounded
    bool flip = false;    // the entering variable reaches its other bound first
    bool unbounded = false;
  };

  Status solve_impl(const DenseLpProblem& p, const LpBasis* warm);
  Status check_problem(const DenseLpProblem& p, bool need_c) const;
  void begin(const DenseLpProblem& p);
  void compute_scaling();
  Eigen::Block<const Eigen::MatrixXd> scaled_a() const { return as_.topLeftCorner(m_, n_); }
  void cold_start();
  bool load_basis(const LpBasis& basis);
  void set_phase2_costs_and_bounds();
  Status run_simplex(int phase);
  double phase1_infeasibility() const;
  void drive_out_artificials();
  Status finish_optimal();
  Status finish_infeasible();
  Status finish_unbounded(int q, int sigma);

  bool refactor();
  bool refresh();  // refactor, then x_B and the primal tolerance
  void compute_basic_values();
  void compute_duals();
  void compute_reduced_costs();
  int price(bool bland, int& sigma) const;
  void ftran(int j);
  double row_ratio(int i, int sigma, double relax) const;
  Ratio ratio_test(int q, int sigma, bool bland);
  void pivot(int q, int sigma, const Ratio& r);
  void update_inverse(int row);
  double primal_scale() const;
  void unscale_results();
  double primal_violation();
  double dual_violation() const;

  Status adjacent(const DenseLpProblem& p, const LpBasis& basis, bool vertices, void* ctx,
                  VisitFn visit);
  void fill_neighbour(int q, int sigma, const Ratio& r);
  bool remember_neighbour(bool ray, int& count, bool& overflow);
  bool add_basis(int& count, bool& overflow);
  void sort_head_into_scratch(int replace_row, int with_col);

  DenseLpCapacity cap_;
  DenseLpOptions opt_;

  // The problem of the current call (valid only during solve/adjacency).
  const DenseLpProblem* p_ = nullptr;
  int m_ = 0;  // rows
  int n_ = 0;  // structural columns; columns n_ .. n_+m_-1 are the logicals
  double max_abs_a_ = 0, max_abs_b_ = 0, max_abs_c_ = 0;  // of the scaled problem
  double orig_max_a_ = 0, orig_max_b_ = 0, orig_max_c_ = 0;
  int out_m_ = 0, out_n_ = 0;  // sizes of the last solve's results

  // Workspace (allocated in the constructor). The simplex works on the scaled problem
  // A_s = R A S (as_), b_s = R b (bs_), c_s = S c (cs_), bounds / S (lo_, up_), with R, S
  // diagonal powers of two (row_scale_, col_scale_); results are unscaled into the *_out_
  // buffers and checked on the original data.
  Eigen::MatrixXd as_;                      // rows x cols
  Eigen::VectorXd bs_, row_scale_, y_out_;  // rows
  Eigen::VectorXd cs_, col_scale_, x_out_, d_out_, point_out_, edge_out_;  // cols
  Eigen::MatrixXd binv_;  // rows x rows: B^-1
  Eigen::MatrixXd work_;  // rows x rows: B during refactorization
  Eigen::VectorXd x_, lo_, up_, cost_, d_;  // cols + rows
  Eigen::VectorXd y_, alpha_, rhs_, rowv_;  // rows
  Eigen::VectorXd xs_, rho_, farkas_;       // rows / cols (see constructor)
  Eigen::VectorXd ray_, point_, edge_;      // cols
  Eigen::VectorXd vertex_;                  // cols + rows: the vertex being walked
  Eigen::MatrixXd seen_;                    // cols x vertex_neighbours: reported neighbours
  std::vector<int> bases_;                  // vertex_bases x rows: sorted heads visited
  std::vector<int> sorted_head_;            // rows
  std::vector<unsigned char> seen_is_ray_;  // vertex_neighbours
  LpBasis basis_;                           // the working (and returned) basis
  LpBasis saved_basis_;                     // the adjacency walk's storage (swapped in)
  LpBasis neighbour_basis_;                 // the basis reported with a neighbour

  Status status_ = Status::not_run;
  SolverStats stats_;
  double objective_ = 0;
  bool warm_started_ = false;
  int max_iterations_ = 0;
  double tol_p_ = 0;  // absolute primal tolerance of the current iterate
  double tol_d_ = 0;  // absolute dual tolerance
  double ptol_ = 0;   // absolute pivot tolerance of the last ratio test
  double cost_scale_ = 0;  // max|cost| of the current phase
};

}  // namespace qs
