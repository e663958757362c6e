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

inline Jet operator+(const Jet& a, const Jet& b) {
  Jet r(a.v + b.v);
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = a.d[k] + b.d[k];
  return r;
}
inline Jet operator-(const Jet& a, const Jet& b) {
  Jet r(a.v - b.v);
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = a.d[k] - b.d[k];
  return r;
}
inline Jet operator-(const Jet& a) {
  Jet r(-a.v);
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = -a.d[k];
  return r;
}
inline Jet operator*(const Jet& a, const Jet& b) {
  Jet r(a.v * b.v);
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = a.d[k] * b.v + a.v * b.d[k];
  return r;
}
inline Jet operator/(const Jet& a, const Jet& b) {
  Jet r(a.v / b.v);
  const double inv = 1.0 / b.v;
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = (a.d[k] - r.v * b.d[k]) * inv;
  return r;
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
  Jet r(std::sqrt(a.v));
  const double s = r.v > 0.0 ? 0.5 / r.v : 0.0;
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = a.d[k] * s;
  return r;
}
inline Jet sin(const Jet& a) {
  Jet r(std::sin(a.v));
  const double c = std::cos(a.v);
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = a.d[k] * c;
  return r;
}
inline Jet cos(const Jet& a) {
  Jet r(std::cos(a.v));
  const double s = -std::sin(a.v);
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = a.d[k] * s;
  return r;
}
/// d atan2(y, x) = (x dy - y dx) / (x^2 + y^2).
inline Jet atan2(const Jet& y, const Jet& x) {
  Jet r(std::atan2(y.v, x.v));
  const double r2 = x.v * x.v + y.v * y.v;
  const double inv = r2 > 0.0 ? 1.0 / r2 : 0.0;
  for (int k = 0; k < kJetWidth; ++k) r.d[k] = (x.v * y.d[k] - y.v * x.d[k]) * inv;
  return r;
}
inline Jet abs(const Jet& a) { return a.v < 0.0 ? -a : a; }
inline Jet select(bool c, const Jet& a, const Jet& b) { return c ? a : b; }
inline Jet min(const Jet& a, const Jet& b) { return a.v < b.v ? a : b; }
inline Jet max(const Jet& a, const Jet& b) { return a.v > b.v ? a : b; }
inline Jet clamp(const Jet& x, const Jet& lo, const Jet& hi) { return min(max(x, lo), hi); }

}  // namespace qs
