// The step derivatives' checks against central differences (tests/core/derivatives_test.cpp,
// tests/core/lcp_derivatives_test.cpp): the state x = [q; the memory that is state], the
// commanded parameters, central differences of an exact step, and the campaign over states
// sampled around an example's trajectory.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <vector>

#include "quasistep/core/derivatives.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tests/support/derivative_samples.hpp"

namespace qs::test {

/// x = [q; the memory that is state] of s.
inline Eigen::VectorXd state_x(const Model& m, const State& s) {
  const int nq = m.n_q(), nm = derivative_memory_size(m);
  Eigen::VectorXd x(nq + nm);
  x.head(nq) = s.q;
  x.tail(nm) = s.memory.head(nm);
  return x;
}
inline void set_x(const Model& m, State& s, const Eigen::VectorXd& x) {
  const int nq = m.n_q(), nm = derivative_memory_size(m);
  s.q = x.head(nq);
  s.memory.head(nm) = x.tail(nm);
}

/// One step of (s, p) solved exactly (to rounding, so that a difference of 1e-6 resolves the
/// derivative to about 1e-9): false when it does not solve.
using ExactStep = std::function<bool(Stepper&, const Model&, const WorldParams&, State&)>;

struct FiniteDifferences {
  Eigen::MatrixXd A, B;
  bool ok = false;
  /// The step is smooth across the differences: in every entry the forward and the backward
  /// difference agree to 1e-3 (1 + |central|). A kink within delta that no complementarity
  /// pair shows (a slot crossing contacts.margin, the nearest edge of a polygon changing)
  /// makes them differ by order 1, and the central difference averages two slopes.
  bool smooth = true;
};

/// Central differences of the exact step in every entry of x and u. An entry of x that is not
/// finite (the MIQP's phi_bar of a slot that was inactive: none) is held, its column zero; an
/// entry of x+ that is the same non-finite value on both sides is constant, its row zero; one
/// that is finite on one side only (a slot that turns active within the difference) makes
/// the differences fail.
inline FiniteDifferences central_differences(Stepper& stepper, const Model& m, const WorldParams& p, const State& s,
                                             double delta, const ExactStep& exact_step) {
  FiniteDifferences fd;
  const Eigen::VectorXd x0 = state_x(m, s);
  const int nx = static_cast<int>(x0.size()), na = m.n_a;
  fd.A = Eigen::MatrixXd::Zero(nx, nx);
  fd.B = Eigen::MatrixXd::Zero(nx, na);
  const auto end_state = [&](const Eigen::VectorXd& x, const WorldParams& pp, Eigen::VectorXd& out) {
    State t = s;
    set_x(m, t, x);
    if (!exact_step(stepper, m, pp, t)) return false;
    out = state_x(m, t);
    return true;
  };
  Eigen::VectorXd plus, minus, center;
  if (!end_state(x0, p, center)) return fd;
  const auto difference = [&](const Eigen::VectorXd& plus, const Eigen::VectorXd& minus, Eigen::Ref<Eigen::VectorXd> col) {
    for (int i = 0; i < nx; ++i) {
      if (std::isfinite(plus[i]) && std::isfinite(minus[i])) {
        col[i] = (plus[i] - minus[i]) / (2 * delta);
        const double forward = (plus[i] - center[i]) / delta, backward = (center[i] - minus[i]) / delta;
        if (std::abs(forward - backward) > 1e-3 * (1 + std::abs(col[i]))) fd.smooth = false;
      } else if (plus[i] == minus[i]) {
        col[i] = 0;
      } else {
        return false;
      }
    }
    return true;
  };
  for (int j = 0; j < nx; ++j) {
    if (!std::isfinite(x0[j])) continue;
    Eigen::VectorXd x = x0;
    x[j] += delta;
    if (!end_state(x, p, plus)) return fd;
    x[j] = x0[j] - delta;
    if (!end_state(x, p, minus)) return fd;
    if (!difference(plus, minus, fd.A.col(j))) return fd;
  }
  for (int a = 0; a < na; ++a) {
    WorldParams pp = p;
    pp.command[static_cast<size_t>(a)] += delta;
    if (!end_state(x0, pp, plus)) return fd;
    pp.command[static_cast<size_t>(a)] = p.command[static_cast<size_t>(a)] - delta;
    if (!end_state(x0, pp, minus)) return fd;
    if (!difference(plus, minus, fd.B.col(a))) return fd;
  }
  fd.ok = true;
  return fd;
}

/// Richardson's extrapolation of central differences at delta and delta / 2,
/// (4 D(delta / 2) - D(delta)) / 3: the error of order delta^2 cancels.
inline FiniteDifferences extrapolated_differences(Stepper& stepper, const Model& m, const WorldParams& p,
                                                  const State& s, double delta, const ExactStep& exact_step) {
  FiniteDifferences wide = central_differences(stepper, m, p, s, delta, exact_step);
  const FiniteDifferences narrow = central_differences(stepper, m, p, s, delta / 2, exact_step);
  wide.ok = wide.ok && narrow.ok;
  wide.smooth = wide.smooth && narrow.smooth;
  if (wide.ok) {
    wide.A = (4 * narrow.A - wide.A) / 3;
    wide.B = (4 * narrow.B - wide.B) / 3;
  }
  return wide;
}

inline double relative_frobenius(const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
  const double scale = want.norm();
  return scale > 0 ? (got - want).norm() / scale : got.norm();
}

struct Campaign {
  int samples = 0, kept = 0, degenerate = 0, failed = 0, kinked = 0;
  double worst_A = 0, worst_B = 0;
};

/// How a campaign takes its differences: the step delta (of x's entries and the commands),
/// and Richardson's extrapolation (for steps whose answers carry errors of 1e-12, which a
/// difference of 1e-6 would turn into 1e-6: a larger delta, its error of order delta^2
/// cancelled).
struct Differences {
  double delta = 1e-6;
  bool extrapolate = false;
};

/// The finite-difference check of the derivatives of `scene_json` on `samples` states of its
/// trajectory, each perturbed by up to 1 mm (lengths) and 1 mrad (angles) (`perturbation`,
/// in m or rad), the memory that is state alike, and its commands by up to 10%. A sample is
/// kept when the step and every difference solve, the derivative is not at a switch, every
/// complementarity pair's margin (StepDerivatives::margin, relative) exceeds 10 delta, and
/// the step is smooth across the differences (FiniteDifferences::smooth: no pair switches
/// and no kink of the geometry lies within delta; with the margin alone, samples whose pairs
/// switch within the difference come in, and their central differences average two slopes:
/// errors up to 0.9).
inline Campaign check_against_differences(const nlohmann::json& scene_json, int samples, unsigned seed,
                                          const ExactStep& exact_step, double perturbation = 1e-3,
                                          Differences differences = {}) {
  const Scene scene = parse_scene(scene_json.dump());
  const Model& m = *scene.model;
  const std::vector<State> rows = trajectory(m);
  auto stepper = make_stepper(m);
  auto reference = make_stepper(m);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_int_distribution<size_t> row(0, rows.size() - 1);
  const double delta = differences.delta;
  StepDerivatives d;
  Campaign c;
  for (int k = 0; k < samples; ++k) {
    State s = rows[row(rng)];
    for (int e = 0; e < m.n_q(); ++e) s.q[e] += perturbation * unit(rng);  // 1 mm or 1 mrad
    for (int a = 0; a < derivative_memory_size(m); ++a) s.memory[a] += perturbation * unit(rng);
    WorldParams p = commanded_params(m, s);
    for (double& u : p.command) u *= 1.0 + 0.1 * unit(rng);
    ++c.samples;
    State after = s;
    if (stepper->step(m, p, after, d) != Status::solved || d.status != Status::solved) {
      ++c.failed;
      continue;
    }
    if (d.degenerate || d.margin <= 10 * delta) {
      c.degenerate += d.degenerate;
      continue;
    }
    const FiniteDifferences fd = differences.extrapolate
                                     ? extrapolated_differences(*reference, m, p, s, delta, exact_step)
                                     : central_differences(*reference, m, p, s, delta, exact_step);
    if (!fd.ok) {
      ++c.failed;
      continue;
    }
    if (!fd.smooth) {
      ++c.kinked;
      continue;
    }
    ++c.kept;
    const double eA = relative_frobenius(d.A, fd.A), eB = m.n_a ? relative_frobenius(d.B, fd.B) : 0.0;
    c.worst_A = std::max(c.worst_A, eA);
    c.worst_B = std::max(c.worst_B, eB);
    if (eA > 1e-6 || eB > 1e-6) {
      // The largest difference of each, and the matrices themselves when they are small.
      const auto worst_entry = [](const Eigen::MatrixXd& got, const Eigen::MatrixXd& want) {
        Eigen::Index i = 0, j = 0;
        if (got.size() > 0) (got - want).cwiseAbs().maxCoeff(&i, &j);
        std::ostringstream o;
        if (got.size() > 0) o << "(" << i << ", " << j << "): " << got(i, j) << " vs " << want(i, j);
        return o.str();
      };
      std::ostringstream all;
      if (d.A.rows() <= 10) all << "\nA =\n" << d.A << "\nA_fd =\n" << fd.A << "\nB =\n" << d.B << "\nB_fd =\n" << fd.B;
      std::ostringstream state;
      state.precision(17);
      state << "q = [" << s.q.transpose() << "], u = [";
      for (double u : p.command) state << " " << u;
      state << " ]";
      ADD_FAILURE() << "sample " << k << " at t = " << s.t << ", " << state.str() << ": |A - A_fd| / |A_fd| = " << eA
                    << ", |B - B_fd| / |B_fd| = " << eB << "; worst A" << worst_entry(d.A, fd.A) << ", worst B"
                    << worst_entry(d.B, fd.B) << all.str();
      return c;
    }
  }
  return c;
}

}  // namespace qs::test
