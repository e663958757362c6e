// The sensitivity of the part of a convex QP's solution that its active set determines, where
// the rest need not be unique: a complementarity step's impulses are often not (two fingers
// sharing a weight by friction, Gamma of an open contact) while its motion is.
//   minimise 1/2 v'Hv + c'v  subject to  A v >= b,   H = diag(h), h >= 0,
// at a solution v with multipliers beta and active rows S: a change of the data that keeps S
// active changes v by dv with (quasistep/kernels/kkt_sensitivity.hpp, Amos & Kolter, "OptNet",
// ICML 2017, sec. 3)
//   H dv - A_S' dbeta_S = -(dH v + dc - dA_S' beta_S)  =: -R1
//   A_S dv              =   db_S - dA_S v              =:  R2.
// The null-space method of KktSensitivity: with A_S' P = Q [R11 R12; 0 0] (Householder QR
// with column pivoting, rank r, each row of A_S first scaled to unit length), Y = Q's first r
// columns and Z the rest,
//   dv = Y w + Z y,   R11' w = (P' R2)_{1..r},   G y = -Z'(R1 + H Y w),   G = Z'HZ,
// but G may be singular here: its null space N holds the directions Z n that keep every
// active row and that H does not penalise, along which v is not unique. The first `outputs`
// entries of v are determined when every such direction leaves them unchanged: factor()
// checks that, and then any solution y of G y = ... gives the same dv there; solve() takes
// the basic one of G's Cholesky factorization with complete pivoting. With H = 0 this is the
// derivative of the solution of the linear system A_S v = b_S in the entries it determines
// (a complementarity problem at its basis, whatever its impulses do: Trinkle's step).
//
// The derivative exists when the system is consistent: dependent active rows' R2 agree with
// the independent rows' (as in KktSensitivity), and R1 has no component along the
// undetermined directions (the undetermined part of v would otherwise have to move without
// bound). inconsistency() measures both.
//
// Sized once (capacity); factor and solve allocate nothing. Never throws or prints.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

class PartialKktSensitivity {
 public:
  /// Rows of A_S (each of unit length) are independent when no pivot of the QR falls below
  /// this (KktSensitivity::kRankTolerance).
  static constexpr double kRankTolerance = 1e-10;
  /// G's Cholesky pivots: a remaining diagonal entry at most this times max(h) ends the
  /// factorization (G's rank).
  static constexpr double kPivotTolerance = 1e-10;
  /// An undetermined direction (scaled to a largest entry of 1) leaves the outputs unchanged
  /// when none of its output entries exceeds this.
  static constexpr double kOutputTolerance = 1e-9;

  PartialKktSensitivity(int max_vars, int max_rows);

  /// Factorises for h (n entries >= 0, H's diagonal) and the active rows A_S (s x n, s <=
  /// max_rows, n <= max_vars). solved; numerical_failure when some direction that keeps every
  /// active row and that H does not penalise moves one of the first `outputs` entries of v
  /// (they are not unique, so have no derivative); bad_input when the sizes exceed the capacity.
  Status factor(const Eigen::Ref<const Eigen::VectorXd>& h, const Eigen::Ref<const Eigen::MatrixXd>& A_S, int outputs);
  /// The rank of A_S (after factor).
  int rank() const { return rank_; }
  /// The number of undetermined directions (after factor): 0 when v is unique.
  int undetermined() const { return undetermined_; }
  /// dv (n x k) for k right-hand sides R1 (n x k) and R2 (s x k); dv is overwritten. Its first
  /// `outputs` rows are the derivative; the rest is one choice among many when undetermined() > 0.
  void solve(const Eigen::Ref<const Eigen::MatrixXd>& R1, const Eigen::Ref<const Eigen::MatrixXd>& R2,
             Eigen::Ref<Eigen::MatrixXd> dv);
  /// The largest inconsistency of the last solve's columns: a dependent row's R2 against what
  /// the independent rows give it, relative to the column's largest |R2| (scaled rows), and
  /// R1's component along an undetermined direction relative to |R1 + H Y w| (the cosine).
  double inconsistency() const { return inconsistency_; }
  /// Multipliers beta (s) with A_S' beta = g (n), the basic solution when A_S has dependent
  /// rows (after factor); returns the residual |Z'g| (2-norm), which is zero to rounding
  /// when g is in the range of A_S' (v is stationary at S).
  double multipliers(const Eigen::Ref<const Eigen::VectorXd>& g, Eigen::Ref<Eigen::VectorXd> beta);

 private:
  int n_ = 0, s_ = 0, rank_ = 0, grank_ = 0, undetermined_ = 0;
  Eigen::MatrixXd X_;         // (max_vars x max_rows) A_S' (rows scaled) factorised: R above, reflectors below
  Eigen::VectorXd beta_;      // (max_rows) the reflectors' factors
  Eigen::VectorXi perm_;      // (max_rows) column k of the factor is row perm_[k] of A_S
  Eigen::VectorXd row_scale_; // (max_rows) 1 / |row k of A_S| (1 for a zero row)
  Eigen::VectorXd h_;         // (max_vars) H's diagonal
  Eigen::MatrixXd Q_;         // (max_vars x max_vars) [Y Z]
  Eigen::MatrixXd L_;         // (max_vars x max_vars) G = Z'HZ, then its pivoted Cholesky factor
  Eigen::VectorXi gperm_;     // (max_vars) G's pivot order
  Eigen::MatrixXd U_;         // (max_vars x max_vars) the undetermined directions Z n, largest entry 1
  Eigen::VectorXd w_, r_, t_; // (max_vars) scratch
  double inconsistency_ = 0;
};

}  // namespace qs
