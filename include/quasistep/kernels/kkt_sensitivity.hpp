// The sensitivity of a convex QP's solution to its data, by implicit differentiation of its
// KKT conditions at the solution's active set (Amos & Kolter, "OptNet", ICML 2017, sec. 3;
// Pang, Suh, Yang & Tedrake, IEEE T-RO 2023, sec. IV differentiate the quasi-dynamic step this
// way). For
//   minimise 1/2 v'Hv + c'v  subject to  A v >= b,
// at a solution v with multipliers beta >= 0 and the active rows S (beta_S > 0, A_S v = b_S),
// a change of the data (dH, dc, dA, db) that keeps S the active set changes v by dv with
//   H dv - A_S' dbeta_S = -(dH v + dc - dA_S' beta_S)  =: -R1
//   A_S dv              =   db_S - dA_S v              =:  R2.
// Solved here by the null-space method, which needs neither beta_S unique nor the rows of A_S
// independent: with A_S' P = Q [R11 R12; 0 0] (Householder QR with column pivoting, rank r),
// Y = Q's first r columns and Z the rest (a basis of A_S's null space),
//   dv = Y w + Z y,   R11' w = (P' R2)_{1..r},   (Z'HZ) y = -Z'(R1 + H Y w).
// dv is unique when Z'HZ is positive definite (the QP's solution v is then unique); the rows
// of P' R2 past r must agree with the first r (dependent active rows whose right-hand sides
// move apart leave the active set: the step is at a switch, inconsistency() says how far).
//
// Sized once (capacity); factor and solve allocate nothing.
#pragma once

#include "quasistep/kernels/eigen.hpp"
#include "quasistep/kernels/status.hpp"

namespace qs {

class KktSensitivity {
 public:
  /// Rows of A_S are independent when no pivot of the QR falls below this fraction of the
  /// largest column norm of A_S'.
  static constexpr double kRankTolerance = 1e-10;
  /// Z'HZ is positive definite when every Cholesky pivot exceeds this fraction of its own
  /// diagonal entry and every diagonal entry exceeds it times the largest |H_ij|.
  static constexpr double kPivotTolerance = 1e-12;

  KktSensitivity(int max_vars, int max_rows, int max_cols);

  /// Factorises for H (n x n, symmetric positive semidefinite) and the active rows A_S (s x n,
  /// s <= max_rows, n <= max_vars). solved, or numerical_failure when Z'HZ is not positive
  /// definite (the QP's v is not unique: some direction that keeps every active row moves
  /// nothing H penalises), or bad_input when the sizes exceed the capacity.
  Status factor(const Eigen::Ref<const Eigen::MatrixXd>& H, const Eigen::Ref<const Eigen::MatrixXd>& A_S);
  /// The rank of A_S (after factor).
  int rank() const { return rank_; }
  /// A_S has dependent rows (rank < s).
  bool dependent_rows() const { return rank_ < s_; }
  /// dv (n x k) for k <= max_cols right-hand sides R1 (n x k) and R2 (s x k), one column per
  /// direction of the data's change; dv is overwritten. After factor() returned solved.
  void solve(const Eigen::Ref<const Eigen::MatrixXd>& R1, const Eigen::Ref<const Eigen::MatrixXd>& R2,
             Eigen::Ref<Eigen::MatrixXd> dv);
  /// The largest disagreement, over the last solve's columns, of a dependent active row's R2
  /// with what the independent rows' dv gives it, relative to the column's largest |R2|
  /// (0 when the rows are independent).
  double inconsistency() const { return inconsistency_; }

 private:
  int n_ = 0, s_ = 0, rank_ = 0;
  Eigen::MatrixXd X_;      // (max_vars x max_rows) A_S' factorised in place: R above, reflectors below
  Eigen::VectorXd beta_;   // (max_rows) the reflectors' factors
  Eigen::VectorXi perm_;   // (max_rows) column k of the factor is row perm_[k] of A_S
  Eigen::MatrixXd Q_;      // (max_vars x max_vars) Q explicitly: [Y Z]
  Eigen::MatrixXd HQ_;     // (max_vars x max_vars) H Q
  Eigen::MatrixXd L_;      // (max_vars x max_vars) Cholesky factor of Z'HZ
  using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  RowMatrix W_, T_, Y_;    // (max_vars x max_cols) solve's scratch: a column per direction
  double inconsistency_ = 0;
};

}  // namespace qs
