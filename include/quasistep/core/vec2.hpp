// Planar vectors and rigid transforms, templated on the scalar type so that the batch
// engine's lane type (several worlds at once) reuses every formula written with them.
#pragma once

#include "quasistep/kernels/lane.hpp"

namespace qs {

/// A scalar type that carries derivatives along with its value `.v` (quasistep/core/jet.hpp
/// sets it for Jet): templates may then decide branches on the values alone.
template <class T>
inline constexpr bool carries_derivatives = false;

template <class T>
struct Vec2 {
  T x{};
  T y{};
};

template <class T> inline Vec2<T> operator+(const Vec2<T>& a, const Vec2<T>& b) { return {a.x + b.x, a.y + b.y}; }
template <class T> inline Vec2<T> operator-(const Vec2<T>& a, const Vec2<T>& b) { return {a.x - b.x, a.y - b.y}; }
template <class T> inline Vec2<T> operator-(const Vec2<T>& a) { return {-a.x, -a.y}; }
template <class T> inline Vec2<T> operator*(const T& s, const Vec2<T>& a) { return {s * a.x, s * a.y}; }
template <class T> inline T dot(const Vec2<T>& a, const Vec2<T>& b) { return a.x * b.x + a.y * b.y; }
/// The z-component of the 3D cross product: Pang-Trinkle-Lo's a (x) b (Pang, Trinkle & Lo 1996, eq. 1).
template <class T> inline T cross(const Vec2<T>& a, const Vec2<T>& b) { return a.x * b.y - a.y * b.x; }
/// Counter-clockwise rotation by 90 degrees: the tangent t = perp(n) makes n x t = +z
/// (Pang, Trinkle & Lo 1996, sec. 2 frame convention).
template <class T> inline Vec2<T> perp(const Vec2<T>& a) { return {-a.y, a.x}; }
template <class T> inline T norm(const Vec2<T>& a) { return sqrt(dot(a, a)); }
template <class T> inline Vec2<T> select(const auto& c, const Vec2<T>& a, const Vec2<T>& b) {
  return {select(c, a.x, b.x), select(c, a.y, b.y)};
}

/// A planar rigid transform: p_world = R(theta) p_local + translation. The rotation is kept
/// as (cos, sin) so composing transforms needs no further trigonometry.
template <class T>
struct Pose2 {
  Vec2<T> translation{};
  T c{1};  // cos(theta)
  T s{0};  // sin(theta)

  static Pose2 from_xytheta(const T& x, const T& y, const T& theta) {
    return {{x, y}, cos(theta), sin(theta)};
  }
  Vec2<T> rotate(const Vec2<T>& v) const { return {c * v.x - s * v.y, s * v.x + c * v.y}; }
  Vec2<T> apply(const Vec2<T>& p) const { return rotate(p) + translation; }
  /// this * other: first `other`, then this.
  Pose2 compose(const Pose2& o) const {
    return {apply(o.translation), c * o.c - s * o.s, s * o.c + c * o.s};
  }
  T angle() const { return atan2(s, c); }
};

}  // namespace qs
