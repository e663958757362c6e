// Lemke's solver, continued: the mixed LCP (free variables with equality rows, Pang &
// Tedrake 2018, eqs. 23a-23b) reduced to a standard LCP by a Schur complement when the free
// block A is nonsingular, else by a principal block pivot on complementary rows chosen by
// column-pivoted QR (Cottle, Pang & Stone 1992, sec. 2.3); quasistep/kernels/lemke.hpp says
// more. Part of lemke.hpp, which includes it: include that one.
#pragma once

namespace qs {

template <int N>
Status Lemke<N>::solve_mixed(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q, int free,
    MixedResult& out, const LemkeOptions& opt) {
  out = MixedResult{};
  double m_abs = 0, q_abs = 0;
  const Status in = check_lcp_input(M, q, N, &m_abs, &q_abs);
  if (in != Status::solved) return out.status = in;
  const int n = static_cast<int>(q.size());
  if (free < 0 || free > n) return out.status = Status::bad_input;
  int eq = 0, ez = 0;
  lcp_scaling_exponents(m_abs, q_abs, eq, ez);
  if (free == 0 || (eq == 0 && ez == 0)) return solve_mixed_as_given(M, q, free, out, opt);
  // Far from unit scale: as solve() does, on the whole mixed problem (u scales as z), so
  // the block pivot and the check below see data of unit size.
  mixed_m_.resize(n, n);
  mixed_q_.resize(n);
  const double pm = exact_pow2(eq + ez), pq = exact_pow2(eq);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) mixed_m_(i, j) = times_pow2(M(i, j), eq + ez, pm);
  for (int i = 0; i < n; ++i) mixed_q_[i] = times_pow2(q[i], eq, pq);
  solve_mixed_as_given(mixed_m_, mixed_q_, free, out, opt);
  if (out.status != Status::solved) return out.status;
  const bool exact = scale_back(out.u, ez) && scale_back(out.z, ez);
  if (!exact) return out.status = Status::numerical_failure;
  // w in the caller's units: 2^-eq times the scaled problem's (exact short of underflow).
  const double pw = exact_pow2(-eq);
  for (Eigen::Index i = 0; i < out.w.size(); ++i) out.w[i] = times_pow2(out.w[i], -eq, pw);
  return out.status;
}

template <int N>
inline Status Lemke<N>::solve_mixed_as_given(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
    int free, MixedResult& out, const LemkeOptions& opt) {
  const int n = static_cast<int>(q.size());
  if (free == 0) {
    out.status = solve(M, q, lcp_, nullptr, opt);
    out.stats = lcp_.stats;
    out.u.resize(0);
    out.z = lcp_.z;
    out.w = lcp_.w;
    return out.status;
  }
  const int k = free, m = n - k;
  // Choose S (k complementary rows to pivot with the free variables) unless A is invertible.
  int s_count = 0;
  lu_small_.compute(M.topLeftCorner(k, k));
  const double a_norm = M.topLeftCorner(k, k).cwiseAbs().maxCoeff();
  const bool a_invertible = a_norm > 0 && lu_small_.rcond() > 1e-12;
  if (!a_invertible) {
    if (m < k) return out.status = Status::not_found;
    qr_.compute(M.topRightCorner(k, m));
    if (qr_.rank() < k) return out.status = Status::not_found;  // u not determined by the rows
    s_count = k;
  }
  // Order [F, S, rest] and pivot on the leading a = k + |S| block.
  for (int i = 0; i < k; ++i) order_[i] = i;
  std::array<bool, N>& in_s = flags_;
  for (int i = 0; i < n; ++i) in_s[i] = false;
  for (int i = 0; i < s_count; ++i) {
    const int col = qr_.colsPermutation().indices()[i];
    order_[k + i] = k + col;
    in_s[k + col] = true;
  }
  int pos = k + s_count;
  for (int j = k; j < n; ++j)
    if (!in_s[j]) order_[pos++] = j;
  const int a = k + s_count;
  perm_.resize(n, n);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) perm_(i, j) = M(order_[i], order_[j]);
  for (int i = 0; i < n; ++i) qperm_[i] = q[order_[i]];
  lu_.compute(perm_.topLeftCorner(a, a));
  if (!(lu_.rcond() > 1e-13)) return out.status = Status::not_found;
  // Principal pivot transform on the leading block (CPS eq. 2.3.9).
  const int b = n - a;
  inv_.resize(a, a);
  inv_ = lu_.inverse();
  mp_.resize(n, n);
  mp_.topLeftCorner(a, a) = inv_;
  mp_.topRightCorner(a, b).noalias() = -inv_.lazyProduct(perm_.topRightCorner(a, b));
  mp_.bottomLeftCorner(b, a).noalias() = perm_.bottomLeftCorner(b, a).lazyProduct(inv_);
  mp_.bottomRightCorner(b, b) = perm_.bottomRightCorner(b, b);
  mp_.bottomRightCorner(b, b).noalias() -= mp_.bottomLeftCorner(b, a).lazyProduct(perm_.topRightCorner(a, b));
  qp_.resize(n);
  qp_.head(a).noalias() = -inv_.lazyProduct(qperm_.head(a));
  qp_.tail(b) = qperm_.segment(a, b);
  qp_.tail(b).noalias() -= mp_.bottomLeftCorner(b, a).lazyProduct(qperm_.head(a));
  // The free rows and the equality slacks (fixed at 0) leave; the rest is LCP(M'', q'')
  // in the variables y = (w_S, z_rest), r = (z_S, w_rest).
  if (m == 0) {
    out.u = qp_.head(k);
    out.z.resize(0);
    out.w.resize(0);
  } else {
    solve(mp_.bottomRightCorner(m, m), qp_.tail(m), lcp_, nullptr, opt);
    out.stats = lcp_.stats;
    if (lcp_.status != Status::solved) return out.status = lcp_.status;
    out.u = qp_.head(k);
    out.u.noalias() += mp_.topRightCorner(k, m).lazyProduct(lcp_.z);
    out.z.resize(m);
    // z_S comes from the reduced problem's w side, which may carry roundoff of either sign:
    // values negligible against the data are clamped as the standard path clamps z; the
    // residual check below still rejects anything larger.
    const double negligible = 1e-14 * std::max(1.0, q.cwiseAbs().maxCoeff());
    for (int p = k; p < n; ++p) {
      const int var = order_[p] - k;  // index into z
      const double v = in_s[order_[p]] ? lcp_.w[p - k] : lcp_.z[p - k];
      out.z[var] = v < 0 && v >= -negligible ? 0.0 : v;
    }
  }
  // Check against the original mixed problem.
  out.w.noalias() = M.bottomLeftCorner(m, k) * out.u;  // noalias: no heap temporary
  out.w.noalias() += M.bottomRightCorner(m, m) * out.z;
  out.w += q.tail(m);
  eq_ = q.head(k);
  eq_.noalias() += M.topLeftCorner(k, k) * out.u;
  eq_.noalias() += M.topRightCorner(k, m) * out.z;
  // The acceptance rule of lcp_acceptance.hpp on [u; z] against the whole mixed problem.
  xcheck_.resize(n);
  xcheck_.head(k) = out.u;
  xcheck_.tail(m) = out.z;
  const double q_abs = q.cwiseAbs().maxCoeff();
  const double eq_abs = eq_.cwiseAbs().maxCoeff();
  out.equality_residual = eq_abs == 0 ? 0.0 : q_abs > 0 ? eq_abs / q_abs : std::numeric_limits<double>::infinity();
  out.stats.residual = lcp_certified_residual(M, q, xcheck_, k, opt.tolerance);
  out.status = out.stats.residual <= opt.tolerance ? Status::solved : Status::numerical_failure;
  return out.status;
}

}  // namespace qs
