#include "quasistep/kernels/ncp_newton.hpp"

namespace qs {

double ncp_natural_residual(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& F,
                            int n_free) {
  double worst = 0;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    const double r = i < n_free ? std::abs(F[i]) : std::abs(std::min(x[i], F[i]));
    // NaN compares false: make it the worst possible value rather than skip it.
    if (!(r <= worst)) worst = std::isnan(r) ? std::numeric_limits<double>::infinity() : r;
  }
  return worst;
}

}  // namespace qs
