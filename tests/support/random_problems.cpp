#include "tests/support/random_problems.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "quasistep/kernels/splitmix64.hpp"

namespace qs {

namespace {

/// The UCP (Pang, Trinkle & Lo 1996, sec. 2) of a grasp of W' (2 n_c x n_q, rows [n; r x n]
/// then [t; r x t]) and finger Jacobian J = [J_n; J_t]: P = [W' | J's columns abar] (the
/// effort-controlled joints, whose velocities are unknowns), alpha the velocity-controlled
/// joints (theta_dot given there), and g_obj from the contact force c, eq. (2): W c + g_obj = 0.
/// The generators add tau and g_man (eq. (3)) their own ways.
UcpData grasp_ucp(const Eigen::MatrixXd& WT, const Eigen::MatrixXd& J_n, const Eigen::MatrixXd& J_t,
                  const Eigen::MatrixXd& J, const std::vector<int>& abar, const std::vector<int>& alpha,
                  const Eigen::VectorXd& theta, const Eigen::VectorXd& mu, const Eigen::VectorXd& c) {
  const auto nq = WT.cols(), na = static_cast<Eigen::Index>(abar.size());
  UcpData d;
  d.P.resize(WT.rows(), nq + na);
  d.P.leftCols(nq) = WT;
  for (Eigen::Index k = 0; k < na; ++k) d.P.col(nq + k) = J.col(abar[static_cast<size_t>(k)]);
  d.J_n = J_n;
  d.J_t = J_t;
  d.theta_dot = theta;
  d.alpha = alpha;
  d.mu = mu;
  d.g_obj = -(WT.transpose() * c);
  return d;
}

}  // namespace

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

  Eigen::MatrixXd J(2 * nc, nth);
  J << J_n, J_t;
  // Loads from the force (eqs. (2)-(3)): g_obj = -W c, tau - g_man = J' c.
  UcpData d = grasp_ucp(WT, J_n, J_t, J, abar, alpha, theta, mu, c);
  d.g_man = Eigen::VectorXd::Zero(nth);
  for (int j = 0; j < nth; ++j) d.g_man[j] = uniform(-0.5, 0.5);
  d.tau = d.g_man + J.transpose() * c;
  return d;
}

// Pang, Trinkle & Lo 1996, sec. 5: "First, we generated a random pair (c_n, c_t) that
// satisfied the Coulomb friction law (7), we then used equations (2) and (3) to determine
// g_obj and g_man. [...] Next we generated a random nonnegative vector v_n and determined
// q_dot and theta_dot from equation (4). From the resulting q_dot and theta_dot, we
// determined the set alpha so that X is nonempty." W, J and tau came from Sandra Sudarsky's
// code (a workpiece touched by point fingers), which is not given. The choices the paper
// leaves open, made here:
//  - the workpiece: an ellipse with semi-axes 1 and 0.6, its centre of gravity at the world
//    origin (sec. 2 puts the world frame there); contact i at a uniformly random angle;
//  - n_i the inward normal, t_i = (-n_y, n_x) so that n_i x t_i points out of the plane
//    (sec. 2); W_i = [n_i t_i; r_i (x) n_i  r_i (x) t_i] (eq. (1));
//  - finger i has two prismatic joints, 2i and 2i+1: along world x and y (world_xy, the
//    default: a generic point finger), or along n_i and t_i (contact_frame: the selection
//    J_n, J_t of data sets 1-4). With v = W' q_dot - J theta_dot (eqs. (4)-(5)) finger i's
//    rows of J_n, J_t are n_i', t_i' on its joints (world_xy), or 1 on joint 2i resp. 2i+1;
//  - mu_i uniform in (0, mu_max) (Table 1's "Range of mu");
//  - c_n,i uniform in (0, 1) and c_t,i = mu_i c_n,i u, u uniform in (-1, 1): every force
//    strictly inside its cone (eq. (7));
//  - tau_j uniform in (-1, 1) (Sudarsky's code gave tau); g_man = tau - J' c (eq. (3)).
//    Only (g_man - tau)_abar = -(J' c)_abar enters d, so tau's law changes nothing;
//  - q_dot uniform in (-1, 1)^3 and v_n,i uniform in (0, 1) (every contact separating in the
//    constructed motion). Eq. (4) fixes one combination of a finger's two joint velocities;
//    the other is fixed by drawing v_t,i uniform in (-1, 1) and applying eq. (5);
//  - alpha: with theta_dot from the constructed motion, X contains the constructed x for
//    every alpha, so abar is a uniformly random set of |abar| joints.
// mu and the forces come from their own stream (load_seed), the rest from seed's.
UcpTable1Instance ucp_table1_problem(const UcpTable1Spec& spec, std::uint64_t seed, std::uint64_t load_seed) {
  std::uint64_t rng = seed;
  std::uint64_t load_rng = load_seed ^ 0xD1B54A32D192ED03ull;  // not seed's sequence when load_seed == seed
  const auto draw = [](std::uint64_t& state, double lo, double hi) {
    return lo + (hi - lo) * static_cast<double>(splitmix64_next(state) >> 11) * 0x1.0p-53;
  };
  const int nc = std::max(1, spec.n_c), nth = 2 * nc, nq = 3;
  const int na = std::clamp(spec.n_abar, 0, nth);
  Eigen::MatrixXd WT(2 * nc, nq);  // W': normal rows, then tangential rows
  Eigen::MatrixXd J_n = Eigen::MatrixXd::Zero(nc, nth), J_t = Eigen::MatrixXd::Zero(nc, nth);
  for (int i = 0; i < nc; ++i) {
    const double phi = draw(rng, 0, 2 * 3.141592653589793);
    const double rx = std::cos(phi), ry = 0.6 * std::sin(phi);
    double nx = -rx, ny = -ry / (0.6 * 0.6);  // minus the gradient of x^2 + (y / 0.6)^2
    const double len = std::hypot(nx, ny);
    nx /= len;
    ny /= len;
    const double tx = -ny, ty = nx;
    WT.row(i) << nx, ny, rx * ny - ry * nx;       // eq. (1): [n; r (x) n]
    WT.row(nc + i) << tx, ty, rx * ty - ry * tx;  //          [t; r (x) t]
    if (spec.joints == UcpFingerJoints::world_xy) {
      J_n(i, 2 * i) = nx;
      J_n(i, 2 * i + 1) = ny;
      J_t(i, 2 * i) = tx;
      J_t(i, 2 * i + 1) = ty;
    } else {
      J_n(i, 2 * i) = 1;
      J_t(i, 2 * i + 1) = 1;
    }
  }
  Eigen::MatrixXd J(2 * nc, nth);
  J << J_n, J_t;

  UcpTable1Instance out;
  // The motion: q_dot, v_n >= 0, v_t; finger i's joint velocities from eqs. (4)-(5),
  // [v_n,i; v_t,i] = W_i' q_dot - A_i [theta_2i; theta_2i+1], A_i = finger i's 2 x 2 block of J.
  out.q_dot.resize(nq);
  for (int k = 0; k < nq; ++k) out.q_dot[k] = draw(rng, -1, 1);
  out.v_n.resize(nc);
  out.v_t.resize(nc);
  Eigen::VectorXd theta(nth);
  for (int i = 0; i < nc; ++i) {
    out.v_n[i] = draw(rng, 0, 1);
    out.v_t[i] = draw(rng, -1, 1);
    if (i < spec.rolling) out.v_n[i] = out.v_t[i] = 0;
    Eigen::Matrix2d A;
    A << J_n(i, 2 * i), J_n(i, 2 * i + 1), J_t(i, 2 * i), J_t(i, 2 * i + 1);
    const Eigen::Vector2d rel(WT.row(i).dot(out.q_dot) - out.v_n[i], WT.row(nc + i).dot(out.q_dot) - out.v_t[i]);
    theta.segment<2>(2 * i) = A.transpose() * rel;  // A is [n_i'; t_i'] or I: orthogonal, A^-1 = A'
  }
  Eigen::VectorXd tau(nth);
  for (int j = 0; j < nth; ++j) tau[j] = draw(rng, -1, 1);
  // abar: a random subset of size na (partial Fisher-Yates).
  std::vector<int> joints(static_cast<size_t>(nth));
  std::iota(joints.begin(), joints.end(), 0);
  for (int k = 0; k < na; ++k) {
    const int pick = k + static_cast<int>(splitmix64_next(rng) % static_cast<std::uint64_t>(nth - k));
    std::swap(joints[static_cast<size_t>(k)], joints[static_cast<size_t>(pick)]);
  }
  std::vector<int> abar(joints.begin(), joints.begin() + na), alpha(joints.begin() + na, joints.end());
  std::sort(abar.begin(), abar.end());
  std::sort(alpha.begin(), alpha.end());

  // The forces, inside the cones (eq. (7)).
  Eigen::VectorXd mu(nc);
  out.c_n.resize(nc);
  out.c_t.resize(nc);
  for (int i = 0; i < nc; ++i) {
    mu[i] = draw(load_rng, 0, spec.mu_max);
    out.c_n[i] = draw(load_rng, 0, 1);
    out.c_t[i] = draw(load_rng, -1, 1) * mu[i] * out.c_n[i];
  }
  Eigen::VectorXd c(2 * nc);
  c << out.c_n, out.c_t;

  out.data = grasp_ucp(WT, J_n, J_t, J, abar, alpha, theta, mu, c);  // g_obj from eq. (2): W c + g_obj = 0
  UcpData& d = out.data;
  d.tau = tau;
  d.g_man = tau - J.transpose() * c;  // eq. (3): J' c = tau - g_man

  // The witnesses (Proposition 1): x = [v_n; v_t+; v_t-], y = [c_n; s_t+; s_t-] with
  // c_t = s_t+ - U c_n and 2 U c_n = s_t+ + s_t-.
  out.x.resize(3 * nc);
  out.y.resize(3 * nc);
  for (int i = 0; i < nc; ++i) {
    out.x[i] = out.v_n[i];
    out.x[nc + i] = std::max(out.v_t[i], 0.0);
    out.x[2 * nc + i] = std::max(-out.v_t[i], 0.0);
    out.y[i] = out.c_n[i];
    out.y[nc + i] = out.c_t[i] + mu[i] * out.c_n[i];
    out.y[2 * nc + i] = mu[i] * out.c_n[i] - out.c_t[i];
  }
  return out;
}

}  // namespace qs
