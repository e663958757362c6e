#include "quasistep/kernels/lcp_enumeration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "quasistep/kernels/branch_and_bound.hpp"
#include "quasistep/kernels/dense_lp.hpp"
#include "quasistep/kernels/lcp_acceptance.hpp"
#include "quasistep/kernels/lemke.hpp"
#include <Eigen/LU>
#include <vector>

namespace qs {

// One node's LP, in the bounded standard form of dense_lp.hpp: columns [x (n) | s (m)],
// rows  M x - [0; s] = -q  (the k free rows have no slack: M_u x = -q_u).
struct LcpEnumeration::Relaxation {
  struct Closed {
    std::vector<Side> fixings;  // (m)
    Eigen::VectorXd y;          // the LP's Farkas vector (n)
  };
  struct Workspace {
    std::unique_ptr<DenseLp> lp;
    Eigen::MatrixXd A;
    Eigen::VectorXd b, c, lo, hi;
    // record: the leaves this workspace closed (the i-th node of every round comes here,
    // so the list is the same on any thread count; solve() merges and sorts them).
    std::vector<Closed> closed;
  };
  struct Warm {};
  using Solution = Eigen::VectorXd;  // [x (n) | s (m)]

  Eigen::MatrixXd M;
  Eigen::VectorXd q;
  int n = 0, k = 0, m = 0;  // variables, free ones, pairs (m = n - k)
  // A node's point is a leaf when its scaled natural residual is below this (the search's
  // own test; the answer is then held to the shared acceptance rule).
  double tolerance = 1e-9;
  bool record = false;  // keep each empty node's Farkas vector (LcpEnumerationOptions::record_certificate)

  int disjunctions() const { return m; }
  Workspace make_workspace() const {
    Workspace w;
    w.lp = std::make_unique<DenseLp>(std::max(n, 1), std::max(n + m, 1));
    w.A = Eigen::MatrixXd::Zero(n, n + m);
    w.b.resize(n);
    w.c.resize(n + m);
    w.lo.resize(n + m);
    w.hi.resize(n + m);
    return w;
  }

  BnbEvaluation evaluate(const Side* fix, const Warm*, Workspace& ws, Warm&, Solution& sol) const {
    const double inf = std::numeric_limits<double>::infinity();
    ws.A.leftCols(n) = M;
    ws.A.rightCols(m).setZero();
    for (int i = 0; i < m; ++i) ws.A(k + i, n + i) = -1.0;
    ws.b = -q;
    for (int j = 0; j < k; ++j) {
      ws.lo[j] = -inf;
      ws.hi[j] = inf;
      ws.c[j] = 0;
    }
    for (int i = 0; i < m; ++i) {
      const int z = k + i, s = n + i;
      const bool z_zero = fix[i] == Side::first, s_zero = fix[i] == Side::second;
      ws.lo[z] = 0;
      ws.hi[z] = z_zero ? 0.0 : inf;
      ws.lo[s] = 0;
      ws.hi[s] = s_zero ? 0.0 : inf;
      const bool open = fix[i] == Side::free;
      ws.c[z] = open ? 1.0 : 0.0;  // steer unfixed pairs toward z_i + s_i = 0
      ws.c[s] = open ? 1.0 : 0.0;
    }
    const Status st = ws.lp->solve(DenseLpProblem{ws.A, ws.b, ws.c, ws.lo, ws.hi});
    if (st == Status::infeasible) {
      // Rows M x + q = s (the k free ones without s): y is a vector of the same rows, and
      // scaling M and q by positive powers of two (solve()) keeps every sign it proves.
      if (record) ws.closed.push_back(Closed{std::vector<Side>(fix, fix + m), ws.lp->farkas()});
      return {Status::infeasible, 0, -1};
    }
    if (st != Status::solved) return {st == Status::unbounded ? Status::numerical_failure : st, 0, -1};
    sol = ws.lp->x();
    // Branch on the most violated unfixed pair; a leaf when the whole point passes the
    // residual check (fixed pairs are complementary by their bounds).
    int branch = -1;
    double worst = 0;
    for (int i = 0; i < m; ++i) {
      if (fix[i] != Side::free) continue;
      const double v = std::min(sol[k + i], sol[n + i]);
      if (v > worst) {
        worst = v;
        branch = i;
      }
    }
    if (branch >= 0) {
      Eigen::VectorXd x = sol.head(n);
      if (lcp_residual(x) > tolerance) return {Status::solved, ws.lp->objective(), branch};
    }
    return {Status::solved, ws.lp->objective(), -1};
  }

  /// The scaled natural residual of x as a mixed LCP (free rows must vanish).
  double lcp_residual(const Eigen::VectorXd& x) const {
    const Eigen::VectorXd w = M * x + q;
    const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(), M.cwiseAbs().maxCoeff() * x.cwiseAbs().maxCoeff()});
    double r = 0;
    for (int j = 0; j < k; ++j) r = std::max(r, std::abs(w[j]));
    for (int i = 0; i < m; ++i) r = std::max(r, std::abs(std::min(x[k + i], w[k + i])));
    return r / scale;
  }
};

/// The point whose basic variables (the free ones, and each z_i that x holds larger than
/// its w_i, z_i against |z|_inf and w_i against |q_i| + sum_j |M_ij x_j|) solve
/// M_BB x_B = -q_B exactly (LU), the others zero; empty when that block is singular.
static Eigen::VectorXd polish(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                              const Eigen::VectorXd& x, int k) {
  const int n = static_cast<int>(q.size());
  const double zmax = n > k ? x.tail(n - k).cwiseAbs().maxCoeff() : 0.0;
  const Eigen::VectorXd w = M * x + q;
  std::vector<int> basic;
  for (int i = 0; i < n; ++i) {
    if (i < k) {
      basic.push_back(i);
      continue;
    }
    const double s = std::abs(q[i]) + M.row(i).cwiseAbs().dot(x.cwiseAbs());
    const double zrel = zmax > 0 ? x[i] / zmax : 0.0, wrel = s > 0 ? std::abs(w[i]) / s : 0.0;
    if (x[i] > 0 && zrel > wrel) basic.push_back(i);
  }
  Eigen::VectorXd out = Eigen::VectorXd::Zero(n);
  if (basic.empty()) return out;
  const Eigen::Index b = static_cast<Eigen::Index>(basic.size());
  Eigen::MatrixXd mb(b, b);
  Eigen::VectorXd qb(b);
  for (Eigen::Index i = 0; i < b; ++i) {
    qb[i] = -q[basic[static_cast<std::size_t>(i)]];
    for (Eigen::Index j = 0; j < b; ++j) mb(i, j) = M(basic[static_cast<std::size_t>(i)], basic[static_cast<std::size_t>(j)]);
  }
  const Eigen::FullPivLU<Eigen::MatrixXd> lu(mb);
  if (!lu.isInvertible()) return Eigen::VectorXd();
  const Eigen::VectorXd xb = lu.solve(qb);
  for (Eigen::Index i = 0; i < b; ++i) out[basic[static_cast<std::size_t>(i)]] = xb[i];
  return out;
}

int exact_dot_sign(const Eigen::Ref<const Eigen::VectorXd>& a, const Eigen::Ref<const Eigen::VectorXd>& b) {
  if (a.size() != b.size()) return 2;
  // h: a nonoverlapping expansion in increasing magnitude (Shewchuk 1997, Grow-Expansion),
  // to which each product's two exact parts (p + e = a_i b_i, e by fma) are added.
  std::vector<double> h;
  h.reserve(static_cast<std::size_t>(2 * a.size()));
  const auto grow = [&h](double x) {
    for (double& hi : h) {  // (x, hi) <- TwoSum(x, hi) (Knuth)
      const double s = x + hi, bv = s - x, av = s - bv;
      hi = (x - av) + (hi - bv);
      x = s;
    }
    h.push_back(x);
  };
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    if (a[i] == 0.0 || b[i] == 0.0) continue;
    const double p = a[i] * b[i];
    // The fma's error term is exact unless it is subnormal: |p| >= 2^-969 keeps it normal.
    if (!std::isfinite(p) || std::abs(p) < 0x1p-969) return 2;
    grow(p);
    grow(std::fma(a[i], b[i], -p));
  }
  for (const double hi : h)
    if (!std::isfinite(hi)) return 2;  // a partial sum overflowed
  for (auto it = h.rbegin(); it != h.rend(); ++it)
    if (*it != 0.0) return *it > 0 ? 1 : -1;  // the largest nonzero component's sign
  return 0;
}

bool lcp_leaf_certificate_exact(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                                int free, const LcpLeafCertificate& leaf) {
  const Eigen::Index n = q.size();
  if (M.rows() != n || M.cols() != n || leaf.y.size() != n || free < 0 || free > n || !leaf.y.allFinite()) return false;
  std::vector<char> z_zero(static_cast<std::size_t>(n), 0), w_zero(static_cast<std::size_t>(n), 0);
  for (const int j : leaf.z_zero) {
    if (j < free || j >= n) return false;
    z_zero[static_cast<std::size_t>(j)] = 1;
  }
  for (const int j : leaf.w_zero) {
    if (j < free || j >= n) return false;
    w_zero[static_cast<std::size_t>(j)] = 1;
  }
  for (Eigen::Index j = free; j < n; ++j)
    if (!w_zero[static_cast<std::size_t>(j)] && leaf.y[j] < 0) return false;
  if (exact_dot_sign(q, leaf.y) != -1) return false;
  for (Eigen::Index j = 0; j < n; ++j) {
    const int g = exact_dot_sign(M.col(j), leaf.y);
    if (g == 2) return false;
    if (j < free ? g != 0 : (!z_zero[static_cast<std::size_t>(j)] && g > 0)) return false;
  }
  return true;
}

namespace {

/// y / max|y| as integers when every entry is within 1e-9 of a fraction of denominator at
/// most 2^20 (continued fractions) and their common denominator is at most 2^40: the
/// exact Farkas vector of data with small integer (or simple rational) entries, whose LP
/// vector is that vector rounded. Empty when it is not.
Eigen::VectorXd rational_integers(const Eigen::VectorXd& y) {
  const double ymax = y.cwiseAbs().maxCoeff();
  if (!(ymax > 0) || !std::isfinite(ymax)) return {};
  std::vector<long long> num(static_cast<std::size_t>(y.size())), den(static_cast<std::size_t>(y.size()));
  long long lcm = 1;
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    const double x = y[i] / ymax;
    // Convergents h/k of x's continued fraction.
    long long h0 = 0, h1 = 1, k0 = 1, k1 = 0;
    double r = x;
    bool found = false;
    for (int it = 0; it < 64; ++it) {
      const double a = std::floor(r);
      if (std::abs(a) > 0x1p40) break;
      const long long ai = static_cast<long long>(a);
      const long long h2 = ai * h1 + h0, k2 = ai * k1 + k0;
      if (k2 > (1LL << 20)) break;
      h0 = h1, h1 = h2, k0 = k1, k1 = k2;
      if (std::abs(x - static_cast<double>(h1) / static_cast<double>(k1)) <= 1e-9) {
        found = true;
        break;
      }
      const double frac = r - a;
      if (frac == 0) break;
      r = 1.0 / frac;
    }
    if (!found) return {};
    num[static_cast<std::size_t>(i)] = h1;
    den[static_cast<std::size_t>(i)] = k1;
    lcm = lcm / std::gcd(lcm, k1) * k1;
    if (lcm > (1LL << 40)) return {};
  }
  Eigen::VectorXd out(y.size());
  for (Eigen::Index i = 0; i < y.size(); ++i)
    out[i] = static_cast<double>(num[static_cast<std::size_t>(i)] * (lcm / den[static_cast<std::size_t>(i)]));
  return out;
}

/// A Farkas vector of the leaf with the widest margin t in its column inequalities: max t
/// over y with g_j + t <= 0 for the columns that must have g_j <= 0, g_j = 0 for the free
/// ones, y_j >= 0 on the rows that need it, q' y = -1, 0 <= t <= 1 (g = M' y). The simplex's
/// vector is exact only to rounding, so a column held at g_j = 0 may come out 1e-17 on the
/// wrong side; with t > 0 each sits clear of zero. Empty when the LP fails.
Eigen::VectorXd margin_farkas(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                              int free, const std::vector<Side>& fix) {
  const int n = static_cast<int>(q.size());
  std::vector<int> cols;  // the columns j >= free that must have g_j <= 0
  for (std::size_t i = 0; i < fix.size(); ++i)
    if (fix[i] != Side::first) cols.push_back(free + static_cast<int>(i));
  const int c = static_cast<int>(cols.size());
  // Rows: the free columns (g_j = 0), the others (g_j + t + sigma_j = 0), then q' y = -1.
  // Columns: y (n), t, sigma (c).
  const int rows = free + c + 1, ncols = n + 1 + c;
  const double inf = std::numeric_limits<double>::infinity();
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(rows, ncols);
  Eigen::VectorXd b = Eigen::VectorXd::Zero(rows), cost = Eigen::VectorXd::Zero(ncols);
  Eigen::VectorXd lo = Eigen::VectorXd::Zero(ncols), hi = Eigen::VectorXd::Constant(ncols, inf);
  for (int j = 0; j < free; ++j) A.row(j).head(n) = M.col(j).transpose();
  for (int r = 0; r < c; ++r) {
    A.row(free + r).head(n) = M.col(cols[static_cast<std::size_t>(r)]).transpose();
    A(free + r, n) = 1.0;
    A(free + r, n + 1 + r) = 1.0;
  }
  A.row(rows - 1).head(n) = q.transpose();
  b[rows - 1] = -1.0;
  for (int j = 0; j < n; ++j) {
    const bool nonnegative = j >= free && fix[static_cast<std::size_t>(j - free)] != Side::second;
    lo[j] = nonnegative ? 0.0 : -inf;
  }
  hi[n] = 1.0;
  cost[n] = -1.0;
  DenseLp lp(rows, ncols);
  if (lp.solve(DenseLpProblem{A, b, cost, lo, hi}) != Status::solved || !(lp.x()[n] > 0)) return {};
  return lp.x().head(n);
}

/// The certificate of one closed leaf: the LP's vector made exact where it can be (scaled
/// by a power of two, the entries that must be >= 0 and are below it clamped to 0; else the
/// small integers of rational_integers), checked exactly; else the clamped vector, marked
/// as holding to the LP's tolerance only.
LcpLeafCertificate certify_leaf(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                                int free, const std::vector<Side>& fix, const Eigen::VectorXd& y_lp) {
  LcpLeafCertificate leaf;
  for (std::size_t i = 0; i < fix.size(); ++i) {
    const int j = free + static_cast<int>(i);
    if (fix[i] == Side::first) leaf.z_zero.push_back(j);
    if (fix[i] == Side::second) leaf.w_zero.push_back(j);
  }
  Eigen::VectorXd y = y_lp;
  const double ymax = y.cwiseAbs().maxCoeff();
  if (ymax > 0 && std::isfinite(ymax)) y *= std::exp2(-std::ilogb(ymax));
  for (std::size_t i = 0; i < fix.size(); ++i) {
    const Eigen::Index j = free + static_cast<Eigen::Index>(i);
    if (fix[i] != Side::second && y[j] < 0) y[j] = 0;
  }
  leaf.y = y;
  leaf.exact = lcp_leaf_certificate_exact(M, q, free, leaf);
  if (leaf.exact) return leaf;
  LcpLeafCertificate integral = leaf;
  integral.y = rational_integers(y);
  if (integral.y.size() == y.size() && lcp_leaf_certificate_exact(M, q, free, integral)) {
    integral.exact = true;
    return integral;
  }
  LcpLeafCertificate margin = leaf;
  margin.y = margin_farkas(M, q, free, fix);
  if (margin.y.size() == y.size()) {
    const double mmax = margin.y.cwiseAbs().maxCoeff();
    if (mmax > 0 && std::isfinite(mmax)) margin.y *= std::exp2(-std::ilogb(mmax));
    for (std::size_t i = 0; i < fix.size(); ++i) {
      const Eigen::Index j = free + static_cast<Eigen::Index>(i);
      if (fix[i] != Side::second && margin.y[j] < 0) margin.y[j] = 0;
    }
    if (lcp_leaf_certificate_exact(M, q, free, margin)) {
      margin.exact = true;
      return margin;
    }
  }
  return leaf;
}

}  // namespace

LcpEnumeration::LcpEnumeration(int capacity, const LcpEnumerationOptions& options)
    : capacity_(capacity), opt_(options), relax_(std::make_unique<Relaxation>()) {}

LcpEnumeration::~LcpEnumeration() = default;

const LcpEnumeration::Result& LcpEnumeration::solve(const Eigen::Ref<const Eigen::MatrixXd>& M,
                                                    const Eigen::Ref<const Eigen::VectorXd>& q, int free) {
  result_ = Result{};
  if (check_lcp_input(M, q, capacity_) != Status::solved || free < 0 || free > q.size()) {
    result_.status = Status::bad_input;
    return result_;
  }
  Relaxation& r = *relax_;
  // The LPs' tolerances have an absolute floor (dense_lp.hpp: 1 + max|b| + ...), so a problem
  // whose q is far below 1 (a step of nanometres) passes points that ignore q, at the root
  // LP or at a leaf. Solve it scaled by powers of two (exact) to max|M| and max|q| of about
  // 1: M' = M / a, q' = q / s, whose solution is x' = x a / s.
  const double m_max = M.cwiseAbs().maxCoeff(), q_max = q.cwiseAbs().maxCoeff();
  const double a = m_max > 0 ? std::exp2(std::round(std::log2(m_max))) : 1.0;
  const double s = q_max > 0 ? std::exp2(std::round(std::log2(q_max))) : 1.0;
  r.M = M / a;
  r.q = q / s;
  r.n = static_cast<int>(q.size());
  r.k = free;
  r.m = r.n - free;
  BnbOptions bo;
  bo.max_nodes = opt_.max_nodes;
  bo.round_width = opt_.round_width;
  bo.stop_at_first_leaf = true;
  // Built per solve: the number of disjunctions is the problem's. This path allocates; it
  // is the fallback after Lemke failed, not the per-step path.
  bnb_ = std::make_unique<BranchAndBound<Relaxation>>(r, bo, 1);
  r.record = opt_.record_certificate;
  const auto& out = bnb_->solve(r);
  result_.stats = out.stats;
  result_.status = out.status;
  if (r.record && out.status == Status::infeasible) {
    // The exhausted tree's leaves, in a canonical order (every workspace's list is the same
    // on any thread count; their interleaving is not needed).
    std::vector<const Relaxation::Closed*> closed;
    for (int i = 0; i < bnb_->options().round_width; ++i)
      for (const Relaxation::Closed& c : bnb_->workspace(i).closed) closed.push_back(&c);
    std::sort(closed.begin(), closed.end(),
              [](const Relaxation::Closed* a, const Relaxation::Closed* b) { return a->fixings < b->fixings; });
    for (const Relaxation::Closed* c : closed) result_.certificate.push_back(certify_leaf(M, q, free, c->fixings, c->y));
    // Every evaluated node closed or branched: one certificate per empty node.
    if (static_cast<long>(closed.size()) != out.stats.infeasible) result_.status = Status::numerical_failure;
  }
  if (out.status == Status::solved) {
    result_.x = out.solution.head(r.n) * (s / a);
    // The acceptance rule every LCP solver shares (lcp_acceptance.hpp), on the caller's data.
    // An LP point is complementary only to the LP's tolerance (a z_i of 1e-17 beside a
    // positive w_i); where it fails the rule, it is polished once: the side of each pair
    // that the point holds at zero (relatively, as the node's test reads it) is set to
    // zero and the others solved for exactly, and the better of the two points is kept.
    result_.residual = lcp_certified_residual(M, q, result_.x, free, opt_.tolerance);
    if (!(result_.residual <= opt_.tolerance)) {
      const Eigen::VectorXd polished = polish(M, q, result_.x, free);
      const double rp = polished.size() ? lcp_certified_residual(M, q, polished, free, opt_.tolerance)
                                        : std::numeric_limits<double>::infinity();
      if (rp < result_.residual) {
        result_.x = polished;
        result_.residual = rp;
      }
    }
    result_.w = M * result_.x + q;
    if (!(result_.residual <= opt_.tolerance)) result_.status = Status::numerical_failure;
  }
  return result_;
}

}  // namespace qs
