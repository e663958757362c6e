// The one place where geometry and kinematics get their transcendental functions and
// branch-free selections. Every path (single world, batch lanes, --scalar) calls these, so
// a world's numbers do not depend on which path computed them. A lane type (batch engine
// issue) supplies overloads of the same names, found by argument-dependent lookup.
#pragma once

#include <cmath>

namespace qs {

inline double sqrt(double x) { return std::sqrt(x); }
inline double sin(double x) { return std::sin(x); }
inline double cos(double x) { return std::cos(x); }
inline double atan2(double y, double x) { return std::atan2(y, x); }
inline double abs(double x) { return std::fabs(x); }

/// select(c, a, b) = c ? a : b. For a lane type `c` is a mask and the choice is per lane.
inline double select(bool c, double a, double b) { return c ? a : b; }

inline double min(double a, double b) { return a < b ? a : b; }
inline double max(double a, double b) { return a > b ? a : b; }
inline double clamp(double x, double lo, double hi) { return min(max(x, lo), hi); }

/// Reductions over a mask for loop control, written once for a lane type's masks (the lane
/// type overloads them) and for bool, the mask of double: one lane.
inline bool any(bool a) { return a; }
inline bool all(bool a) { return a; }
inline bool none(bool a) { return !a; }
inline int count(bool a) { return a ? 1 : 0; }

}  // namespace qs
