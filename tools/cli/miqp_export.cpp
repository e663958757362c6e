#include "tools/cli/miqp_export.hpp"

#include <cmath>
#include <ostream>
#include <vector>

#include "quasistep/core/output_file.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/stepper.hpp"
#include "tools/cli/cli.hpp"
#include "tools/cli/cli_common.hpp"

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

namespace qs::cli {

int cmd_export_miqp(const ExportOptions& opt, std::ostream& out, std::ostream& err) {
  const Scene scene = load_scene_or_fail(opt.scene);
  const Model& m = *scene.model;
  if (m.formulation != Formulation::pang_tedrake_miqp)
    throw InputError(opt.scene + ": model.formulation: export-miqp needs \"pang_tedrake_miqp\", not \"" +
                     std::string(to_string(m.formulation)) + "\"");
  if (!(m.step.h > 0)) throw InputError(opt.scene + ": step.h: missing (required to take steps)");
  // Checked before the earlier steps are solved; without --out the LP goes to standard output.
  io::OutputSet outputs(out, {opt.scene});
  io::Output* lp = outputs.add("--out", opt.out.empty() ? "-" : opt.out);
  PangTedrakeMiqp stepper(m);
  State s = initial_state(m);
  for (int l = 1; l < opt.step; ++l) {
    if (stepper.step(m, s) != Status::solved) {
      err << "quasistep: "
          << io::printable(opt.scene + ": step " + std::to_string(l) + " (before the exported one): " +
                           std::string(to_string(stepper.report().status)) + ": " + stepper.report().detail)
          << "\n";
      return kStepFailed;
    }
  }
  if (stepper.build(m, s) != Status::solved) {
    err << "quasistep: " << io::printable(opt.scene + ": step " + std::to_string(opt.step) + ": " + stepper.report().detail)
        << "\n";
    return kStepFailed;
  }
  const std::string line = provenance(scene) + " step=" + std::to_string(opt.step);
  outputs.open();
  io::write_miqp_lp(m, stepper.view(), opt.big_m, line, lp->stream());
  outputs.commit();
  if (lp->kind() != io::OutputKind::standard_output)
    err << "export-miqp: step " << opt.step << " (" << stepper.active_contacts() << " contacts, "
        << 4 * stepper.active_contacts() << " binaries) in " << opt.out << "\n";
  return kOk;
}

}  // namespace qs::cli
