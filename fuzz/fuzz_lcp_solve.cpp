// Fuzz target: Lemke's verdicts, held to an exact oracle. The input bytes are an LCP of size
// n <= 10 whose entries are multiples of 1/16 in [-8, 8) (exact in doubles), and a power of
// two 2^k, k in [-40, 40]. Lemke solves (M, q) and (2^k M, 2^k q):
//   - a `solved` answer must meet the acceptance rule (quasistep/kernels/lcp_acceptance.hpp)
//     in exact rational arithmetic (GMP): z >= 0, w >= -tol, sum z_i |w_i| <= tol sum z_i,
//     tol = 2^-20 max|q|, w = M z + q formed exactly (no wrong `solved`);
//   - both must give the same status, and the same z bit for bit when solved (a verdict that
//     changes with an exact scaling means some test is still absolute).
// Anything else aborts.
#include <gmpxx.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "quasistep/kernels/lcp_acceptance.hpp"
#include "quasistep/kernels/lemke.hpp"

namespace {

/// The rule in exact arithmetic (every double is an exact rational).
bool exactly_accepted(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, const Eigen::VectorXd& z) {
  const Eigen::Index n = q.size();
  mpq_class s = 0;
  for (Eigen::Index i = 0; i < n; ++i) s = std::max(s, mpq_class(std::abs(q[i])));
  const mpq_class tol = s * mpq_class(qs::kLcpTolerance);
  mpq_class zsum = 0, zw = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!(z[i] >= 0) || !std::isfinite(z[i])) return false;
    mpq_class w = q[i];
    for (Eigen::Index j = 0; j < n; ++j)
      if (z[j] != 0) w += mpq_class(M(i, j)) * mpq_class(z[j]);
    if (w < -tol) return false;
    zsum += z[i];
    zw += mpq_class(z[i]) * abs(w);
  }
  return zw <= tol * zsum;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int n = 1 + data[0] % 10;
  const int k = static_cast<int>(data[1] % 81) - 40;
  std::size_t at = 2;
  auto next = [&]() { return at < size ? static_cast<double>(static_cast<int8_t>(data[at++])) / 16.0 : 0.0; };
  Eigen::MatrixXd M(n, n);
  Eigen::VectorXd q(n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) M(i, j) = next();
  for (int i = 0; i < n; ++i) q[i] = next();
  static auto solver = std::make_unique<qs::Lemke<64>>();
  static auto a = std::make_unique<qs::Lemke<64>::Result>();
  static auto b = std::make_unique<qs::Lemke<64>::Result>();
  const qs::Status sa = solver->solve(M, q, *a);
  if (sa == qs::Status::solved && !exactly_accepted(M, q, a->z)) std::abort();  // a wrong `solved`
  const double p = std::ldexp(1.0, k);
  const Eigen::MatrixXd Ms = M * p;
  const Eigen::VectorXd qs_ = q * p;
  const qs::Status sb = solver->solve(Ms, qs_, *b);
  if (sb != sa) std::abort();  // the verdict changed under an exact scaling
  if (sa == qs::Status::solved)
    for (int i = 0; i < n; ++i)
      if (a->z[i] != b->z[i]) std::abort();  // the same problem: the same answer, bit for bit
  return 0;
}
