// The dense QP's factorization and its updates as constraints enter and leave the working set (dense_qp.hpp).
#include "quasistep/kernels/dense_qp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

#include "dense_qp_helpers.hpp"

namespace qs {
namespace {

// Rounds of temporary constraints one factorization may add before giving up.
constexpr int kMaxTemporaryRounds = 3;

/// (x_i, y_i) <- (p x_i + q y_i, r x_i + t y_i), i < n: a plane rotation of two columns.
void rotate(double* x, double* y, int n, double p, double q, double r, double t) {
  const NativeSimd pv(p), qv(q), rv(r), tv(t);
  int i = 0;
  for (; i + kNativeWidth <= n; i += kNativeWidth) {
    const NativeSimd a = load_native(x + i), b = load_native(y + i);
    store_native(pv * a + qv * b, x + i);
    store_native(rv * a + tv * b, y + i);
  }
  for (; i < n; ++i) {
    const double a = x[i], b = y[i];
    x[i] = p * a + q * b;
    y[i] = r * a + t * b;
  }
}

}  // namespace

// ---- factorization ------------------------------------------------------------------------------

void DenseQp::reset_factors() {
  for (int k = 0; k < t_; ++k) {
    const int id = work_[k];
    in_w_[id] = 0;
    if (id >= first_temp()) t_used_[id - first_temp()] = 0;
  }
  Q_.topLeftCorner(n_, n_).setIdentity();
  t_ = 0;
  nz_ = n_;
  singular_ = false;
}

bool DenseQp::add_constraint(int id, bool update_l) {
  const int n = n_;
  // u = Q'a (all n components).
  if (!is_row(id) && id < first_temp()) {
    const int j = id < first_upper() ? id - first_lower() : id - first_upper();
    const double sgn = id < first_upper() ? 1.0 : -1.0;
    for (int k = 0; k < n; ++k) u_[k] = sgn * Q_(j, k);
  } else if (is_row(id) && row_sparse(id)) {
    const double* a = N_.col(id).data();
    const int* nz = row_nz_.data() + static_cast<std::size_t>(id) * cap_.vars;
    const int e = row_nnz_[id];
    // Four columns at a time: four independent sums (the latency of one chain of adds
    // bounded this loop), each in the same order as one at a time, so bitwise the same.
    const Eigen::Index ld = Q_.outerStride();
    int k = 0;
    for (; k + 4 <= n; k += 4) {
      const double* q = Q_.col(k).data();
      double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
      for (int l = 0; l < e; ++l) {
        const int j = nz[l];
        const double aj = a[j];
        s0 += aj * q[j];
        s1 += aj * q[j + ld];
        s2 += aj * q[j + 2 * ld];
        s3 += aj * q[j + 3 * ld];
      }
      u_[k] = s0;
      u_[k + 1] = s1;
      u_[k + 2] = s2;
      u_[k + 3] = s3;
    }
    for (; k < n; ++k) {
      const double* q = Q_.col(k).data();
      double s = 0.0;
      for (int l = 0; l < e; ++l) s += a[nz[l]] * q[nz[l]];
      u_[k] = s;
    }
  } else {
    const double* a = v_.data();
    if (is_row(id)) a = N_.col(id).data();
    else load_normal(id, v_.data());
    for (int k = 0; k < n; ++k) u_[k] = dot(Q_.col(k).data(), a, n);
  }
  // w_r = z_r'a (reduced index r <-> column n-1-r), into w_.
  double rho = 0.0;
  for (int r = 0; r < nz_; ++r) {
    w_[r] = u_[zcol(r)];
    rho += w_[r] * w_[r];
  }
  rho = std::sqrt(rho);
  if (!(rho > opt_.dependency_tol * normal_norm(id))) return false;
  if (!update_l) {
    // No L to keep in step (a working set being built): Z's column order is free, so
    // w is rotated from each nonzero entry onto the next and then swapped into last place.
    // With sparse normals (bounds, contact rows) that is a few rotations instead of one
    // per column after the first nonzero.
    int prev = -1;
    for (int r = 0; r < nz_; ++r) {
      if (w_[r] == 0.0) continue;
      if (prev >= 0) {
        const double a = w_[prev], b = w_[r];
        const double h = std::sqrt(a * a + b * b);
        const double c = b / h, s = a / h;
        w_[prev] = 0.0;
        w_[r] = h;
        rotate(Q_.col(zcol(prev)).data(), Q_.col(zcol(r)).data(), n, c, -s, s, c);
      }
      prev = r;
    }
    if (prev != nz_ - 1) {
      double* qa = Q_.col(zcol(prev)).data();
      double* qb = Q_.col(zcol(nz_ - 1)).data();
      std::swap_ranges(qa, qa + n, qb);
      w_[nz_ - 1] = w_[prev];
      w_[prev] = 0.0;
    }
  }
  // Rotate w onto its last entry: Z <- Z G, and L <- G'L K (K restores the triangle).
  for (int r = 0; update_l && r + 1 < nz_; ++r) {
    const double a = w_[r], b = w_[r + 1];
    if (a == 0.0) continue;
    const double h = std::sqrt(a * a + b * b);
    const double c = b / h, s = a / h;
    w_[r] = 0.0;
    w_[r + 1] = h;
    // (c x - s y, s x + c y): c x + (-s) y is the same number, to the sign of a zero sum.
    rotate(Q_.col(zcol(r)).data(), Q_.col(zcol(r + 1)).data(), n, c, -s, s, c);
    for (int k = 0; k <= r + 1; ++k) {
      const double x = L_(r, k), y = L_(r + 1, k);
      L_(r, k) = c * x - s * y;
      L_(r + 1, k) = s * x + c * y;
    }
    const double a2 = L_(r, r), b2 = L_(r, r + 1);
    if (b2 == 0.0) continue;
    const double h2 = std::sqrt(a2 * a2 + b2 * b2);
    const double c2 = a2 / h2, s2 = b2 / h2;
    for (int i = r; i < nz_; ++i) {
      const double x = L_(i, r), y = L_(i, r + 1);
      L_(i, r) = c2 * x + s2 * y;
      L_(i, r + 1) = -s2 * x + c2 * y;
    }
    L_(r, r + 1) = 0.0;
  }
  // The last reduced column (Q column t) joins Y.
  for (int k = 0; k < t_; ++k) R_(k, t_) = u_[k];
  R_(t_, t_) = w_[nz_ - 1];
  for (int k = t_ + 1; k < n; ++k) R_(k, t_) = 0.0;
  work_[t_] = id;
  in_w_[id] = 1;
  ++t_;
  --nz_;
  ++changes_since_refactor_;
  return true;
}

void DenseQp::delete_constraint(int pos) {
  const int id = work_[pos];  // -1: a hot start's constraint that is gone (no marks)
  if (id >= 0) {
    in_w_[id] = 0;
    if (id >= first_temp()) t_used_[id - first_temp()] = 0;
  }
  const int t = t_;
  for (int j = pos; j + 1 < t; ++j) {
    for (int i = 0; i <= j + 1; ++i) R_(i, j) = R_(i, j + 1);
    work_[j] = work_[j + 1];
  }
  // R is upper Hessenberg in columns pos..t-2: rotate rows (j, j+1) back to a triangle, and
  // Y's columns with them.
  for (int j = pos; j + 1 < t; ++j) {
    const double a = R_(j, j), b = R_(j + 1, j);
    if (b == 0.0) continue;
    const double h = std::sqrt(a * a + b * b);
    const double c = a / h, s = b / h;
    for (int k = j; k + 1 < t; ++k) {
      const double x = R_(j, k), y = R_(j + 1, k);
      R_(j, k) = c * x + s * y;
      R_(j + 1, k) = -s * x + c * y;
    }
    R_(j + 1, j) = 0.0;
    rotate(Q_.col(j).data(), Q_.col(j + 1).data(), n_, c, s, -s, c);
  }
  for (int k = 0; k < t; ++k) R_(t - 1, k) = 0.0;
  --t_;
  ++nz_;
  ++changes_since_refactor_;
}

void DenseQp::h_times(const double* v, double* out) {
  for (int i = 0; i < n_; ++i) out[i] = 0.0;
  const int k = hk_;
  if (k == 0) return;
  for (int a = 0; a < k; ++a) gather_[a] = v[hidx_[a]];
  scatter_.head(k).noalias() = Hs_.topLeftCorner(k, k) * gather_.head(k);
  for (int a = 0; a < k; ++a) out[hidx_[a]] = scatter_[a];
}

bool DenseQp::border_new_column() {
  // The new column of Z is reduced index nz-1 = column t of Q.
  const int r = nz_ - 1;
  const double* z = Q_.col(t_).data();
  h_times(z, hv_.data());
  double gamma = 0.0;
  for (int a = 0; a < hk_; ++a) gamma += z[hidx_[a]] * hv_[hidx_[a]];
  // v = Z_old' H z, then w = L^-1 v (forward), stored as row r of L.
  for (int k = 0; k < r; ++k) {
    const double* zk = Q_.col(zcol(k)).data();
    double s = 0.0;
    for (int a = 0; a < hk_; ++a) s += zk[hidx_[a]] * hv_[hidx_[a]];
    v_[k] = s;
  }
  double ww = 0.0;
  for (int k = 0; k < r; ++k) {
    double s = v_[k];
    for (int i = 0; i < k; ++i) s -= L_(k, i) * L_(r, i);
    const double wk = s / L_(k, k);
    L_(r, k) = wk;
    L_(k, r) = 0.0;
    ww += wk * wk;
  }
  const double sigma = gamma - ww;
  // The decision is on the curvature of the unit direction d/|d|, d = Z u with
  // u = [-L^-T w; 1]: d'Hd = u'Z'HZu = sigma, |d|^2 = |u|^2. (sigma alone carries an error
  // of order eps |u|^2 |Z'HZ| when Z'HZ is ill-conditioned, and |u| is then large.)
  double uu = 1.0;
  for (int i = r - 1; i >= 0; --i) {
    double s = L_(r, i);
    for (int j = i + 1; j < r; ++j) s -= L_(j, i) * u_[j];
    u_[i] = s / L_(i, i);
    uu += u_[i] * u_[i];
  }
  if (sigma > zero_curv_ * uu) {
    L_(r, r) = std::sqrt(sigma);
    singular_ = false;
    return true;
  }
  // Zero curvature. The factor keeps the pivot's true (tiny) value, not 0, so that L L'
  // stays Z'HZ to rounding through the next rotations: zeroing it would change Z'HZ by
  // sigma each time, and those changes accumulate past the threshold.
  L_(r, r) = std::sqrt(std::max(sigma, 0.0));
  singular_ = true;
  return false;
}

void DenseQp::compute_reduced_hessian() {
  const int nz = nz_, k = hk_;
  if (k == 0) {
    L_.topLeftCorner(nz, nz).setZero();
    return;
  }
  // Z on the variables H touches (ZS), H Z there (HZ), then Z'HZ = ZS' HZ into L_.
  for (int r = 0; r < nz; ++r) {
    const double* z = Q_.col(zcol(r)).data();
    for (int a = 0; a < k; ++a) ZS_(a, r) = z[hidx_[a]];
  }
  for (int r = 0; r < nz; ++r) {
    double* out = HZ_.col(r).data();
    for (int a = 0; a < k; ++a) out[a] = 0.0;
    for (int b = 0; b < k; ++b) {
      const double zb = ZS_(b, r);
      if (zb == 0.0) continue;
      const double* h = Hs_.col(b).data();
      for (int a = 0; a < k; ++a) out[a] += h[a] * zb;
    }
  }
  for (int s = 0; s < nz; ++s) {
    const double* hz = HZ_.col(s).data();
    for (int r = s; r < nz; ++r) {
      const double* zr = ZS_.col(r).data();
      double v = 0.0;
      for (int a = 0; a < k; ++a) v += zr[a] * hz[a];
      L_(r, s) = v;
      L_(s, r) = v;
    }
  }
}

int DenseQp::pivoted_cholesky_of_reduced_hessian() {
  const int rank = pivoted_cholesky(L_, nz_, zero_curv_, piv_.data());
  // The same symmetric permutation on Z's columns, so that L L' = Z'HZ in the new order.
  for (int s = 0; s < rank; ++s)
    if (piv_[s] != s) Q_.col(zcol(s)).head(n_).swap(Q_.col(zcol(piv_[s])).head(n_));
  return rank;
}

bool DenseQp::factor_reduced_hessian(bool allow_temporaries) {
  for (int round = 0; round <= kMaxTemporaryRounds; ++round) {
    compute_reduced_hessian();
    const int rank = pivoted_cholesky_of_reduced_hessian();
    const int nz = nz_;
    if (rank == nz) {
      for (int j = 0; j < nz; ++j)
        for (int i = 0; i < j; ++i) L_(i, j) = 0.0;
      singular_ = false;
      return true;
    }
    if (!allow_temporaries || round == kMaxTemporaryRounds) return false;
    // Null space of Z'HZ: N = [-L11^-T L21'; I] (nz x k); the temporary normals are the
    // columns of Z N, normalised, each in a free slot of T_.
    const int k = nz - rank;
    int slot = 0;
    for (int c = 0; c < k; ++c) {
      while (slot < n_ && t_used_[slot]) ++slot;
      if (slot == n_) return false;
      // Solve L11' y = L21(c, :)' by back substitution.
      for (int i = rank - 1; i >= 0; --i) {
        double s = L_(rank + c, i);
        for (int j = i + 1; j < rank; ++j) s -= L_(j, i) * u_[j];
        u_[i] = s / L_(i, i);
      }
      double* d = T_.col(slot).data();
      const double* zc = Q_.col(zcol(rank + c)).data();
      for (int i = 0; i < n_; ++i) d[i] = zc[i];
      for (int j = 0; j < rank; ++j) {
        const double f = -u_[j];
        if (f == 0.0) continue;
        axpy(f, Q_.col(zcol(j)).data(), d, n_);
      }
      double norm = 0.0;
      for (int i = 0; i < n_; ++i) norm += d[i] * d[i];
      norm = std::sqrt(norm);
      for (int i = 0; i < n_; ++i) d[i] /= norm;
      t_used_[slot] = 1;  // reserved; released again if not added
      saved_[c] = slot;
    }
    for (int c = 0; c < k; ++c) {
      const int s = saved_[c];
      const int id = first_temp() + s;
      t_rhs_[s] = dot_normal(id, x_.data());
      if (add_constraint(id, false)) ++temporaries_made_;
      else t_used_[s] = 0;
    }
  }
  return false;
}

bool DenseQp::rebuild_qr() {
  const int t = t_;
  for (int k = 0; k < t; ++k) saved_[k] = work_[k];
  reset_factors();
  // Equalities and fixings first: one of them is only ever dropped as dependent on others
  // of its kind (then it is implied by them); any other constraint may be dropped.
  for (int pass = 0; pass < 2; ++pass) {
    for (int k = 0; k < t; ++k) {
      const int id = saved_[k];
      if (is_equality(id) != (pass == 0)) continue;
      if (id >= first_temp()) t_used_[id - first_temp()] = 1;
      if (!add_constraint(id, false) && id >= first_temp()) t_used_[id - first_temp()] = 0;
    }
  }
  return true;
}

bool DenseQp::refactor(bool allow_temporaries) {
  rebuild_qr();
  const bool ok = factor_reduced_hessian(allow_temporaries);
  changes_since_refactor_ = 0;
  return ok;
}

bool DenseQp::check_l_diagonal() const {
  const double tol = zero_curv_;
  for (int i = 0; i < nz_; ++i)
    if (!(L_(i, i) * L_(i, i) > tol)) return false;
  return true;
}

}  // namespace qs
