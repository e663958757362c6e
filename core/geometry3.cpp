#include "quasistep/core/geometry3.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>
#include <algorithm>
#include <cmath>
#include <limits>

namespace qs {

using geometry3::Mat3;
using geometry3::Quat;
using geometry3::Vec3;

Mat3 ecp_rotation(const Quat& q) {
  const double w = q[0], x = q[1], y = q[2], z = q[3];
  Mat3 R;
  R << 1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),  //
      2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),   //
      2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y);
  return R;
}

// ---- the hull's geometry ----------------------------------------------------------------

int hull_face_count(const Body3& b) { return static_cast<int>(b.hull_normals.size()) + (b.cylinder ? 1 : 0); }

double hull_face_value(const Body3& b, int i, const Vec3& x) {
  if (i < static_cast<int>(b.hull_normals.size())) return b.hull_normals[i].dot(x) - b.hull_offsets[i];
  const HullCylinder& cy = *b.cylinder;
  const Vec3 y = x - cy.center;
  const Vec3 py = y - y.dot(cy.axis) * cy.axis;
  return (py.squaredNorm() - cy.radius * cy.radius) / (2 * cy.radius);
}

Vec3 hull_face_normal(const Body3& b, int i, const Mat3& R, const Vec3& c, const Vec3& p) {
  if (i < static_cast<int>(b.hull_normals.size())) return R * b.hull_normals[i];
  const HullCylinder& cy = *b.cylinder;
  const Vec3 y = R.transpose() * (p - c) - cy.center;
  const Vec3 py = y - y.dot(cy.axis) * cy.axis;
  const double n = py.norm();
  return n > 0 ? Vec3(R * py / n) : Vec3(-Vec3::UnitZ());  // on the axis: any radial direction; say down
}

double hull_lowest(const Body3& b, const Mat3& R, const Vec3& c, double tol, Vec3* centroid) {
  if (!b.cylinder) {
    double z = std::numeric_limits<double>::infinity();
    for (const Vec3& v : b.hull_vertices) z = std::min(z, c[2] + R.row(2).dot(v));
    if (centroid) {
      Vec3 sum = Vec3::Zero();
      int count = 0;
      for (const Vec3& v : b.hull_vertices) {
        const Vec3 p = c + R * v;
        if (p[2] <= z + tol) sum += p, ++count;
      }
      *centroid = sum / count;
    }
    return z;
  }
  // A cylinder's lowest points lie on its caps' rims, at the rim point below each cap's
  // centre along d, the downward direction perpendicular to the axis; with the axis vertical
  // the lower cap is the lowest face (its centre is its centroid).
  const HullCylinder& cy = *b.cylinder;
  const Vec3 a = R * cy.axis;
  const Vec3 d = -Vec3::UnitZ() + a[2] * a;  // -(e_z - (e_z' a) a)
  const double dn = d.norm();
  Vec3 rim[2];
  for (int e = 0; e < 2; ++e) {
    const Vec3 centre = c + R * (cy.center + (e == 0 ? -cy.half_length : cy.half_length) * cy.axis);
    rim[e] = dn > 1e-12 ? Vec3(centre + cy.radius * d / dn) : centre;
  }
  const double z = std::min(rim[0][2], rim[1][2]);
  if (centroid) {
    Vec3 sum = Vec3::Zero();
    int count = 0;
    for (const Vec3& p : rim)
      if (p[2] <= z + tol) sum += p, ++count;
    *centroid = sum / count;
  }
  return z;
}

double hull_extent(const Body3& b) {
  if (b.cylinder) return b.cylinder->center.norm() + std::hypot(b.cylinder->half_length, b.cylinder->radius);
  double r = 0;
  for (const Vec3& v : b.hull_vertices) r = std::max(r, v.norm());
  return r;
}

// ---- hull -----------------------------------------------------------------------------

bool convex_hull_3d(const std::vector<Vec3>& p, Hull3& out, std::string& why) {
  out = Hull3{};
  const int n = static_cast<int>(p.size());
  if (n < 4) {
    why = "needs at least 4 points (a solid)";
    return false;
  }
  if (n > kEcpMaxHullPoints) {
    why = "at most " + std::to_string(kEcpMaxHullPoints) + " points";
    return false;
  }
  double scale = 0;
  for (const Vec3& a : p)
    for (const Vec3& b : p) scale = std::max(scale, (a - b).norm());
  if (!(scale > 0)) {
    why = "the points all coincide";
    return false;
  }
  const double tol = 1e-9 * scale;
  // A solid: the points' spread has three non-negligible principal directions.
  Vec3 mean = Vec3::Zero();
  for (const Vec3& a : p) mean += a;
  mean /= n;
  Mat3 spread = Mat3::Zero();
  for (const Vec3& a : p) spread += (a - mean) * (a - mean).transpose();
  Eigen::SelfAdjointEigenSolver<Mat3> solid(spread, Eigen::EigenvaluesOnly);
  if (!(solid.eigenvalues()[0] > 1e-12 * scale * scale)) {
    why = "the points are coplanar (no solid hull)";
    return false;
  }
  // A facet plane passes through three points with every point on one side of it.
  for (int i = 0; i < n; ++i) {
    for (int j = i + 1; j < n; ++j) {
      for (int k = j + 1; k < n; ++k) {
        Vec3 nrm = (p[j] - p[i]).cross(p[k] - p[i]);
        const double len = nrm.norm();
        if (!(len > 1e-9 * scale * scale)) continue;  // (nearly) collinear triple
        nrm /= len;
        double lo = 0, hi = 0;
        for (const Vec3& x : p) {
          const double s = nrm.dot(x - p[i]);
          lo = std::min(lo, s);
          hi = std::max(hi, s);
        }
        if (hi > tol && lo < -tol) continue;  // points on both sides: not a facet
        if (hi > tol) nrm = -nrm;             // outward: every point on the inner side
        const double off = nrm.dot(p[i]);
        bool seen = false;
        for (size_t f = 0; f < out.normals.size() && !seen; ++f)
          seen = (out.normals[f] - nrm).norm() < 1e-9 && std::abs(out.offsets[f] - off) < tol;
        if (!seen) {
          out.normals.push_back(nrm);
          out.offsets.push_back(off);
        }
      }
    }
  }
  if (out.normals.empty()) {
    why = "the points are coplanar (no solid hull)";
    return false;
  }
  // An extreme point lies on three facet planes with independent normals; a point on an
  // edge or face (or inside, or repeated) is dropped.
  for (int i = 0; i < n; ++i) {
    Mat3 gram = Mat3::Zero();
    for (size_t f = 0; f < out.normals.size(); ++f)
      if (std::abs(out.normals[f].dot(p[i]) - out.offsets[f]) <= tol) gram += out.normals[f] * out.normals[f].transpose();
    bool repeated = false;
    for (const Vec3& v : out.vertices) repeated = repeated || (v - p[i]).norm() <= tol;
    Eigen::SelfAdjointEigenSolver<Mat3> es(gram, Eigen::EigenvaluesOnly);
    if (!repeated && es.eigenvalues()[0] > 1e-6) out.vertices.push_back(p[i]);
    else ++out.dropped;
  }
  return true;
}

}  // namespace qs
