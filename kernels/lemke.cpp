#include "kernels/lemke.hpp"

#include <algorithm>
#include <cmath>

namespace qs {

double lcp_natural_residual(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                            const Eigen::Ref<const Eigen::VectorXd>& z) {
  const Eigen::Index n = q.size();
  double worst = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double w = M.row(i).dot(z) + q[i];
    worst = std::max(worst, std::abs(std::min(z[i], w)));
  }
  const double scale = std::max({1.0, q.cwiseAbs().maxCoeff(), M.cwiseAbs().maxCoeff() * z.cwiseAbs().maxCoeff()});
  return worst / scale;
}

Status check_lcp_input(const Eigen::Ref<const Eigen::MatrixXd>& M, const Eigen::Ref<const Eigen::VectorXd>& q,
                       int capacity, double* m_abs_max) {
  const Eigen::Index n = q.size();
  if (n < 1 || n > capacity || M.rows() != n || M.cols() != n) return Status::bad_input;
  double biggest = 0;
  for (Eigen::Index j = 0; j < n; ++j) {
    const double* m = M.data() + j * M.outerStride();
    for (Eigen::Index i = 0; i < n; ++i) {
      if (!std::isfinite(m[i])) return Status::bad_input;
      biggest = std::max(biggest, std::abs(m[i]));
    }
    if (!std::isfinite(q[j])) return Status::bad_input;
  }
  if (m_abs_max) *m_abs_max = biggest;
  return Status::solved;
}

}  // namespace qs
