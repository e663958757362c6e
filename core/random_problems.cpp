#include "quasistep/core/random_problems.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "quasistep/kernels/splitmix64.hpp"

namespace qs {

UcpData ucp_random_problem(const UcpRandomSpec& spec, std::uint64_t seed) {
  std::uint64_t rng = seed;
  const auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(splitmix64_next(rng) >> 11) * 0x1.0p-53;
  };
  const int nc = std::max(1, spec.n_c), nth = 2 * nc, nq = 3;
  const int na = std::clamp(spec.n_abar, 0, nth);
  Eigen::MatrixXd WT(2 * nc, nq);  // W' : normal rows, then tangential rows
  Eigen::MatrixXd J_n = Eigen::MatrixXd::Zero(nc, nth), J_t = Eigen::MatrixXd::Zero(nc, nth);
  for (int i = 0; i < nc; ++i) {
    const double phi = uniform(0, 2 * 3.141592653589793);
    const double rx = std::cos(phi), ry = 0.6 * std::sin(phi);
    // Inward normal: minus the gradient of x^2 + (y/0.6)^2; t = (-n_y, n_x), so that n x t
    // points out of the plane (sec. 2).
    double nx = -rx, ny = -ry / (0.6 * 0.6);
    const double len = std::hypot(nx, ny);
    nx /= len;
    ny /= len;
    const double tx = -ny, ty = nx;
    WT.row(i) << nx, ny, rx * ny - ry * nx;            // eq. (1): [n; r (x) n]
    WT.row(nc + i) << tx, ty, rx * ty - ry * tx;       //          [t; r (x) t]
    J_n(i, 2 * i) = 1;
    J_t(i, 2 * i + 1) = 1;
  }
  Eigen::VectorXd mu(nc), cn(nc), ct(nc);
  for (int i = 0; i < nc; ++i) {
    mu[i] = uniform(0, spec.mu_max);
    cn[i] = uniform(0, 1);
    ct[i] = uniform(-1, 1) * mu[i] * cn[i];  // eq. (7)
  }
  Eigen::VectorXd c(2 * nc);
  c << cn, ct;
  // A motion: random q_dot and v_n >= 0; the finger's normal joint from eq. (4), its tangential
  // joint at random.
  Eigen::VectorXd q_dot(nq), theta(nth);
  for (int k = 0; k < nq; ++k) q_dot[k] = uniform(-1, 1);
  for (int i = 0; i < nc; ++i) {
    const double vn = uniform(0, 1);
    theta[2 * i] = WT.row(i).dot(q_dot) - vn;
    theta[2 * i + 1] = uniform(-1, 1);
  }
  // abar: a random subset of size na (partial Fisher-Yates).
  std::vector<int> joints(static_cast<size_t>(nth));
  for (int j = 0; j < nth; ++j) joints[static_cast<size_t>(j)] = j;
  for (int k = 0; k < na; ++k) {
    const int pick = k + static_cast<int>(splitmix64_next(rng) % static_cast<std::uint64_t>(nth - k));
    std::swap(joints[static_cast<size_t>(k)], joints[static_cast<size_t>(pick)]);
  }
  std::vector<int> abar(joints.begin(), joints.begin() + na), alpha(joints.begin() + na, joints.end());
  std::sort(abar.begin(), abar.end());
  std::sort(alpha.begin(), alpha.end());

  UcpData d;
  Eigen::MatrixXd J(2 * nc, nth);
  J << J_n, J_t;
  d.P.resize(2 * nc, nq + na);
  d.P.leftCols(nq) = WT;
  for (int k = 0; k < na; ++k) d.P.col(nq + k) = J.col(abar[static_cast<size_t>(k)]);
  d.J_n = J_n;
  d.J_t = J_t;
  d.theta_dot = theta;
  d.alpha = alpha;
  d.mu = mu;
  // Loads from the force (eqs. (2)-(3)): g_obj = -W c, tau - g_man = J' c.
  d.g_obj = -(WT.transpose() * c);
  d.g_man = Eigen::VectorXd::Zero(nth);
  for (int j = 0; j < nth; ++j) d.g_man[j] = uniform(-0.5, 0.5);
  d.tau = d.g_man + J.transpose() * c;
  return d;
}

}  // namespace qs
