#include "quasistep/core/formulations/formulation_table.hpp"

#include <array>
#include <limits>

#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/perfect_velocity_lcp.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/json_node.hpp"

namespace qs {
namespace {

int no_memory(const Model&) { return 0; }
void no_memory_start(const Model&, const double*, double*) {}

/// A formulation without parameters: "model" holds only "formulation".
void no_params(const json_input::Node& model, Model&) { model.expect_object({"formulation"}); }

template <class S>
std::unique_ptr<Stepper> make(const Model& m) {
  return std::make_unique<S>(m);
}

using K = ParameterRef::Kind;

// One row per Formulation, in its order (formulation_info indexes by the enumeration).
constexpr std::array<FormulationInfo, 7> kTable{{
    {.id = Formulation::trinkle_lcp,
     .name = "trinkle_lcp",
     .world = WorldType::vertical,
     .reference = "Pang & Tedrake 2018, secs. III-IV (the LCP without the objective)",
     .time_stepping = true,
     .memory_size = no_memory,
     .start_memory = no_memory_start,
     .lane_kernel = LaneKernel::none,
     .model_gain = {},
     .model_gain_kind = K::model_c,
     .joint_gain = {},
     .make_stepper = make<TrinkleLcp>,
     .read_params = no_params},
    {.id = Formulation::perfect_velocity_lcp,
     .name = "perfect_velocity_lcp",
     .world = WorldType::tabletop,
     .reference = "Halm & Posa 2018, eqs. (13)-(14) (B = 0)",
     .time_stepping = true,
     .memory_size = no_memory,
     .start_memory = no_memory_start,
     .lane_kernel = LaneKernel::halm_posa,
     .model_gain = {},  // c scales B = 0
     .model_gain_kind = K::model_c,
     .joint_gain = {},
     .make_stepper = make<PerfectVelocityLcp>,
     .read_params = read_perfect_velocity_lcp_params},
    {.id = Formulation::halm_posa_lcp,
     .name = "halm_posa_lcp",
     .world = WorldType::tabletop,
     .reference = "Halm & Posa 2018, eqs. (31)-(38)",
     .time_stepping = true,
     .memory_size = no_memory,
     .start_memory = no_memory_start,
     .lane_kernel = LaneKernel::halm_posa,
     .model_gain = "c",
     .model_gain_kind = K::model_c,
     .joint_gain = {},
     .make_stepper = make<HalmPosaLcp>,
     .read_params = read_halm_posa_lcp_params},
    {.id = Formulation::pang_tedrake_miqp,
     .name = "pang_tedrake_miqp",
     .world = WorldType::vertical,
     .reference = "Pang & Tedrake 2018, eq. (23)",
     .time_stepping = true,
     .memory_size = PangTedrakeMiqp::memory_size,
     .start_memory = PangTedrakeMiqp::start_memory,
     .lane_kernel = LaneKernel::none,
     .model_gain = "stiffness",
     .model_gain_kind = K::model_stiffness,
     .joint_gain = {},
     .make_stepper = make<PangTedrakeMiqp>,
     .read_params = read_pang_tedrake_miqp_params},
    {.id = Formulation::anitescu_qp,
     .name = "anitescu_qp",
     .world = WorldType::vertical,
     .reference = "Pang & Tedrake, \"Fast simulation of rigid multibody quasistatic systems with convex "
                  "optimization\" (Anitescu's relaxation)",
     .time_stepping = true,
     .memory_size = AnitescuQp::memory_size,
     .start_memory = AnitescuQp::start_memory,
     .lane_kernel = LaneKernel::anitescu_quasi_dynamic,
     .model_gain = {},
     .model_gain_kind = K::model_c,
     .joint_gain = "stiffness",
     .make_stepper = make<AnitescuQp>,
     .read_params = read_anitescu_qp_params},
    {.id = Formulation::ucp,
     .name = "ucp",
     .world = WorldType::vertical,
     .reference = "Pang, Trinkle & Lo 1996 (instantaneous)",
     .time_stepping = false,
     .memory_size = no_memory,
     .start_memory = no_memory_start,
     .lane_kernel = LaneKernel::none,
     .model_gain = {},
     .model_gain_kind = K::model_c,
     .joint_gain = {},
     .make_stepper = nullptr,
     .read_params = no_params},
    {.id = Formulation::ecp_ncp,
     .name = "ecp_ncp",
     .world = WorldType::body_on_plane,
     .reference = "Xie & Chakraborty 2021, eqs. (18)-(19)",
     .time_stepping = true,
     .memory_size = EcpNcp::memory_size,
     .start_memory = EcpNcp::start_memory,
     .lane_kernel = LaneKernel::none,
     .model_gain = {},
     .model_gain_kind = K::model_c,
     .joint_gain = {},
     .make_stepper = make<EcpNcp>,
     .read_params = read_ecp_ncp_params},
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
