#include "tools/cli/miqp_export.hpp"

#include <cmath>
#include <vector>

namespace qs::io {
namespace {

/// "+ 2 x" / "- 0.5 y" terms of a linear row, skipping zeros; "0 dq_..." when all vanish.
void write_row(std::ostream& o, const Eigen::Ref<const Eigen::RowVectorXd>& a, const std::vector<std::string>& names) {
  bool any = false;
  for (Eigen::Index j = 0; j < a.size(); ++j) {
    if (a[j] == 0) continue;
    o << (a[j] < 0 ? " - " : (any ? " + " : " ")) << std::abs(a[j]) << " " << names[j];
    any = true;
  }
  if (!any) o << " 0 " << names[0];
}

}  // namespace

void write_miqp_lp(const Model& m, const PangTedrakeMiqp::View& v, double big_m, const std::string& provenance,
                   std::ostream& o) {
  const int n = static_cast<int>(v.qp.c.size()), nc = v.contacts;
  std::vector<std::string> name(n);
  for (int e = 0; e < v.n_u + v.n_a; ++e) name[e] = "dq_" + m.dofs[e].name;
  const char* kind[4] = {"Pn_", "Ptp_", "Ptm_", "Gamma_"};
  for (int t = 0; t < 4; ++t)
    for (int c = 0; c < nc; ++c) name[v.pair_var(c, t)] = kind[t] + std::to_string(v.slots[c]);
  o.precision(17);
  o << "\\ " << provenance.substr(provenance.rfind('#', 0) == 0 ? 2 : 0) << "\n";
  o << "\\ Pang & Tedrake 2018, eq. (23), big-M " << big_m << "; objective constant |dqa_bar|^2 = " << v.constant
    << " is not included below\n";
  o << "Minimize\n obj:";
  write_row(o, v.qp.c.transpose(), name);
  o << " + [";
  bool any = false;
  for (int i = 0; i < n; ++i)
    for (int j = i; j < n; ++j) {
      const double h = (i == j ? 1.0 : 2.0) * v.qp.H(i, j);  // [ ... ] / 2 holds x'Hx
      if (h == 0) continue;
      o << (h < 0 ? " - " : (any ? " + " : " ")) << std::abs(h) << " " << name[i];
      if (i == j) o << " ^2";
      else o << " * " << name[j];
      any = true;
    }
  o << " ] / 2\nSubject To\n";
  for (int e = 0; e < v.qp.A_eq.rows(); ++e) {
    o << " balance_" << e << ":";
    write_row(o, v.qp.A_eq.row(e), name);
    o << " = " << v.qp.b_eq[e] + 0.0 << "\n";
  }
  for (int c = 0; c < nc; ++c)
    for (int t = 0; t < 4; ++t) {
      const std::string tag = std::to_string(v.slots[c]) + "_" + std::to_string(t);
      const int r = v.pair_row(c, t);
      o << " left_" << tag << ":";
      write_row(o, v.qp.A_in.row(r), name);
      o << " >= " << v.qp.b_in[r] + 0.0 << "\n";
      // (23d): left - b <= M z,  impulse <= M (1 - z)
      o << " left_M_" << tag << ":";
      write_row(o, v.qp.A_in.row(r), name);
      o << " - " << big_m << " z_" << tag << " <= " << v.qp.b_in[r] + 0.0 << "\n";
      o << " impulse_M_" << tag << ": " << name[v.pair_var(c, t)] << " + " << big_m << " z_" << tag << " <= " << big_m
        << "\n";
    }
  for (int c = 0; c < nc; ++c) {
    const int r = 4 * nc + c;
    o << " elastic_" << v.slots[c] << ":";
    write_row(o, v.qp.A_in.row(r), name);
    o << " >= " << v.qp.b_in[r] + 0.0 << "\n";
  }
  o << "Bounds\n";
  for (int e = 0; e < n; ++e) {
    if (std::isinf(v.qp.lower[e]) && std::isinf(v.qp.upper[e])) o << " " << name[e] << " free\n";
    else if (!std::isinf(v.qp.upper[e])) o << " " << v.qp.lower[e] << " <= " << name[e] << " <= " << v.qp.upper[e] << "\n";
  }
  o << "Binaries\n";
  for (int c = 0; c < nc; ++c)
    for (int t = 0; t < 4; ++t) o << " z_" << v.slots[c] << "_" << t << "\n";
  o << "End\n";
}

}  // namespace qs::io
