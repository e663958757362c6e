#include "core/formulations/formulation_table.hpp"

#include <array>
#include <limits>

#include "core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "core/formulations/halm_posa_lcp/perfect_velocity_lcp.hpp"
#include "core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "core/json_node.hpp"

namespace qs {
namespace {

int no_memory(const Model&) { return 0; }

/// A formulation without parameters: "model" holds only "formulation".
void no_params(const json_input::Node& model, Model&) { model.expect_object({"formulation"}); }

template <class S>
std::unique_ptr<Stepper> make(const Model& m) {
  return std::make_unique<S>(m);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// One row per Formulation, in its order (formulation_info indexes by the enumeration).
constexpr std::array<FormulationInfo, 7> kTable{{
    {Formulation::trinkle_lcp, "trinkle_lcp", WorldType::vertical,
     "Pang & Tedrake 2018, secs. III-IV (the LCP without the objective)", true, no_memory, 0.0, false, false,
     make<TrinkleLcp>, no_params},
    {Formulation::perfect_velocity_lcp, "perfect_velocity_lcp", WorldType::tabletop,
     "Halm & Posa 2018, eqs. (13)-(14) (B = 0)", true, no_memory, 0.0, false, true, make<PerfectVelocityLcp>,
     read_perfect_velocity_lcp_params},
    {Formulation::halm_posa_lcp, "halm_posa_lcp", WorldType::tabletop, "Halm & Posa 2018, eqs. (31)-(38)", true,
     no_memory, 0.0, false, true, make<HalmPosaLcp>, read_halm_posa_lcp_params},
    // memory: the elastic bounds start at +inf (no previous step), PangTedrakeMiqp::memory_size.
    {Formulation::pang_tedrake_miqp, "pang_tedrake_miqp", WorldType::vertical, "Pang & Tedrake 2018, eq. (23)", true,
     PangTedrakeMiqp::memory_size, kInf, false, false, make<PangTedrakeMiqp>, read_pang_tedrake_miqp_params},
    {Formulation::anitescu_qp, "anitescu_qp", WorldType::vertical,
     "Pang & Tedrake, \"Fast simulation of rigid multibody quasistatic systems with convex optimization\" (Anitescu's relaxation)", true, AnitescuQp::memory_size,
     0.0, true, true, make<AnitescuQp>, read_anitescu_qp_params},
    {Formulation::ucp, "ucp", WorldType::vertical, "Pang, Trinkle & Lo 1996 (instantaneous)", false, no_memory, 0.0,
     false, false, nullptr, no_params},
    {Formulation::ecp_ncp, "ecp_ncp", WorldType::body_on_plane, "Xie & Chakraborty 2016, eqs. (18)-(19)", true,
     EcpNcp::memory_size, 0.0, false, false, make<EcpNcp>, read_ecp_ncp_params},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kTable.size(); ++i)
    if (static_cast<std::size_t>(kTable[i].id) != i) return false;
  return true;
}
static_assert(rows_in_enum_order(), "formulation_info indexes kTable by the Formulation enumeration");

}  // namespace

std::span<const FormulationInfo> formulation_table() { return kTable; }

const FormulationInfo& formulation_info(Formulation f) { return kTable[static_cast<std::size_t>(f)]; }

}  // namespace qs
