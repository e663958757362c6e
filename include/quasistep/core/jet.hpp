// Forward-mode automatic differentiation for the templates written on a scalar type T
// (quasistep/core/vec2.hpp, geometry.hpp, kinematics.hpp, contacts.hpp and the Anitescu
// problem of anitescu_lanes.hpp): a Jet carries a value and its derivatives along
// kJetWidth directions, so that evaluating a template at T = Jet gives the exact
// derivatives of what it computes at T = double (to rounding), second derivatives of the
// contact geometry included. The step's derivatives (quasistep/core/derivatives.hpp) use it
// for the derivatives of a step's problem data with respect to the configuration.
//
// The value part of every operation is the double operation itself, in the same order, so
// a template's values at T = Jet are bitwise its values at T = double. Comparisons and
// select act on the values: a template's branch is the branch the double evaluation takes,
// and the derivative is that branch's (one-sided where the branch switches).
#pragma once

#include <array>
#include <cmath>

#include "quasistep/core/vec2.hpp"
#include "quasistep/kernels/lane.hpp"

namespace qs {

/// Directions one Jet carries; the derivative code sweeps n directions in ceil(n / kJetWidth)
/// passes.
inline constexpr int kJetWidth = 8;

struct Jet {
  double v = 0.0;
  std::array<double, kJetWidth> d{};

  Jet() = default;
  // Implicit from double, as T(x) is used throughout the templates: a constant.
  Jet(double value) : v(value) {}  // NOLINT(google-explicit-constructor)
  /// The variable x along direction k.
  static Jet variable(double x, int k) {
    Jet j(x);
    j.d[static_cast<std::size_t>(k)] = 1.0;
    return j;
  }
};

template <>
inline constexpr bool carries_derivatives<Jet> = true;

// The derivative lanes are computed as explicit vectors (the build passes
// -fno-tree-vectorize, so plain loops over them stay scalar: eight times the instructions).
// Element-wise + - * / are the IEEE operations lane by lane, and -ffp-contract=off keeps
// them unfused, so each lane is bitwise what the scalar loop computed (as Lane's, lane.hpp).
namespace jet_detail {
using Lanes = stdx::simd<double, stdx::simd_abi::deduce_t<double, kJetWidth>>;
QS_LANE_INLINE Lanes load(const Jet& a) { return Lanes(a.d.data(), stdx::element_aligned); }
QS_LANE_INLINE Jet make(double v, const Lanes& d) {
  Jet r(v);
  d.copy_to(r.d.data(), stdx::element_aligned);
  return r;
}
}  // namespace jet_detail

QS_LANE_INLINE Jet operator+(const Jet& a, const Jet& b) {
  using namespace jet_detail;
  return make(a.v + b.v, load(a) + load(b));
}
QS_LANE_INLINE Jet operator-(const Jet& a, const Jet& b) {
  using namespace jet_detail;
  return make(a.v - b.v, load(a) - load(b));
}
QS_LANE_INLINE Jet operator-(const Jet& a) {
  using namespace jet_detail;
  return make(-a.v, -load(a));
}
QS_LANE_INLINE Jet operator*(const Jet& a, const Jet& b) {
  using namespace jet_detail;
  return make(a.v * b.v, load(a) * Lanes(b.v) + Lanes(a.v) * load(b));
}
QS_LANE_INLINE Jet operator/(const Jet& a, const Jet& b) {
  using namespace jet_detail;
  const double v = a.v / b.v;
  const double inv = 1.0 / b.v;
  return make(v, (load(a) - Lanes(v) * load(b)) * Lanes(inv));
}
inline bool operator<(const Jet& a, const Jet& b) { return a.v < b.v; }
inline bool operator<=(const Jet& a, const Jet& b) { return a.v <= b.v; }
inline bool operator>(const Jet& a, const Jet& b) { return a.v > b.v; }
inline bool operator>=(const Jet& a, const Jet& b) { return a.v >= b.v; }
inline bool operator==(const Jet& a, const Jet& b) { return a.v == b.v; }
inline bool operator!=(const Jet& a, const Jet& b) { return a.v != b.v; }

/// d sqrt(x) = dx / (2 sqrt(x)); at x = 0 the derivative is taken as 0 (the templates use
/// sqrt(0) only on a branch their select then discards, and a NaN there would survive in
/// no value but would in an unused derivative).
inline Jet sqrt(const Jet& a) {
  using namespace jet_detail;
  const double v = std::sqrt(a.v);
  const double s = v > 0.0 ? 0.5 / v : 0.0;
  return make(v, load(a) * Lanes(s));
}
inline Jet sin(const Jet& a) {
  using namespace jet_detail;
  return make(std::sin(a.v), load(a) * Lanes(std::cos(a.v)));
}
inline Jet cos(const Jet& a) {
  using namespace jet_detail;
  return make(std::cos(a.v), load(a) * Lanes(-std::sin(a.v)));
}
/// d atan2(y, x) = (x dy - y dx) / (x^2 + y^2).
inline Jet atan2(const Jet& y, const Jet& x) {
  using namespace jet_detail;
  const double r2 = x.v * x.v + y.v * y.v;
  const double inv = r2 > 0.0 ? 1.0 / r2 : 0.0;
  return make(std::atan2(y.v, x.v), (Lanes(x.v) * load(y) - Lanes(y.v) * load(x)) * Lanes(inv));
}
inline Jet abs(const Jet& a) { return a.v < 0.0 ? -a : a; }
inline Jet select(bool c, const Jet& a, const Jet& b) { return c ? a : b; }
inline Jet min(const Jet& a, const Jet& b) { return a.v < b.v ? a : b; }
inline Jet max(const Jet& a, const Jet& b) { return a.v > b.v ? a : b; }
inline Jet clamp(const Jet& x, const Jet& lo, const Jet& hi) { return min(max(x, lo), hi); }

}  // namespace qs
