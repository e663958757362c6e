#include "quasistep/core/formulation_table.hpp"

#include <array>
#include <atomic>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>

#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/perfect_velocity_lcp.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/json_node.hpp"
#include "quasistep/core/lane_step.hpp"
#include "quasistep/core/stepper.hpp"

namespace qs {
namespace {

int no_memory(const Model&) { return 0; }
void no_memory_start(const Model&, const double*, double*) {}

/// A formulation without parameters: "model" holds only "formulation".
void no_params(const json_input::Node& model, Model&) { model.expect_object({"formulation"}); }

template <class S>
std::unique_ptr<Stepper> make(const Model& m, const StepperOptions&) {
  return std::make_unique<S>(m);
}

// One row per Formulation, in its order (formulation_info indexes by the enumeration).
constexpr std::array<FormulationInfo, 7> kProductRows{{
    {.id = Formulation::trinkle_lcp,
     .name = "trinkle_lcp",
     .world = WorldType::vertical,
     .reference = "Pang & Tedrake 2018, secs. III-IV (the LCP without the objective)",
     .time_stepping = true,
     .memory_size = no_memory,
     .start_memory = no_memory_start,
     .has_derivatives = true,
     .model_gain = {},
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
     .has_derivatives = true,
     .lanes = &kHalmPosaLanes,
     .model_gain = {},  // c scales B = 0
     .joint_gain = {},
     .scene_gains = halm_posa_scene_gains,
     .make_stepper = make<PerfectVelocityLcp>,
     .read_params = read_perfect_velocity_lcp_params,
     .inert_parameter = perfect_velocity_lcp_inert_parameter,
     .fixed_world_parameter = tabletop_fixed_world_parameter,
     .batch_fixed_parameter = tabletop_batch_fixed_parameter,
     .describe = tabletop_describe},
    {.id = Formulation::halm_posa_lcp,
     .name = "halm_posa_lcp",
     .world = WorldType::tabletop,
     .reference = "Halm & Posa 2018, eqs. (31)-(38)",
     .time_stepping = true,
     .memory_size = no_memory,
     .start_memory = no_memory_start,
     .has_derivatives = true,
     .lanes = &kHalmPosaLanes,
     .model_gain = "c",
     .joint_gain = {},
     .scene_gains = halm_posa_scene_gains,
     .make_stepper = make<HalmPosaLcp>,
     .read_params = read_halm_posa_lcp_params,
     .inert_parameter = halm_posa_lcp_inert_parameter,
     .fixed_world_parameter = tabletop_fixed_world_parameter,
     .batch_fixed_parameter = tabletop_batch_fixed_parameter,
     .describe = tabletop_describe},
    {.id = Formulation::pang_tedrake_miqp,
     .name = "pang_tedrake_miqp",
     .world = WorldType::vertical,
     .reference = "Pang & Tedrake 2018, eq. (23)",
     .time_stepping = true,
     .memory_size = PangTedrakeMiqp::memory_size,
     .start_memory = PangTedrakeMiqp::start_memory,
     .derivative_memory = pang_tedrake_miqp_derivative_memory,
     .has_derivatives = true,
     .model_gain = "stiffness",
     .joint_gain = {},
     .scene_gains = pang_tedrake_miqp_scene_gains,
     .make_stepper = make<PangTedrakeMiqp>,
     .read_params = read_pang_tedrake_miqp_params,
     .stepper_buffers = pang_tedrake_miqp_stepper_buffers},
    {.id = Formulation::anitescu_qp,
     .name = "anitescu_qp",
     .world = WorldType::vertical,
     .reference = "Pang & Tedrake, \"Fast simulation of rigid multibody quasistatic systems with convex "
                  "optimization\" (Anitescu's relaxation)",
     .time_stepping = true,
     .memory_size = AnitescuQp::memory_size,
     .start_memory = AnitescuQp::start_memory,
     .derivative_memory = anitescu_qp_derivative_memory,
     .has_derivatives = true,
     .lanes = &kAnitescuQuasiDynamicLanes,
     .model_gain = {},
     .joint_gain = "stiffness",
     .scene_gains = anitescu_qp_scene_gains,
     .make_stepper = make_anitescu_qp,
     .read_params = read_anitescu_qp_params,
     .stepper_buffers = anitescu_qp_stepper_buffers,
     .jacobian_doubles = 8},  // its own J_n, J_t (2), A and Q^-1 A' (2 x 2 per slot and DOF)
    {.id = Formulation::ucp,
     .name = "ucp",
     .world = WorldType::vertical,
     .reference = "Pang, Trinkle & Lo 1996 (instantaneous)",
     .time_stepping = false,
     .memory_size = no_memory,
     .start_memory = no_memory_start,
     .model_gain = {},
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
     .model_gain = {},
     .joint_gain = {},
     .make_stepper = make<EcpNcp>,
     .read_params = read_ecp_ncp_params},
}};

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kProductRows.size(); ++i)
    if (static_cast<std::size_t>(kProductRows[i].id) != i) return false;
  return true;
}
static_assert(rows_in_enum_order(), "formulation_info indexes the table by the Formulation enumeration");

constexpr std::array<FormulationInfo, kMaxFormulations> table_of_product_rows() {
  std::array<FormulationInfo, kMaxFormulations> rows{};
  for (std::size_t i = 0; i < kProductRows.size(); ++i) rows[i] = kProductRows[i];
  return rows;
}

// The table: filled before any code runs (constant initialisation), so a registration from
// another file's static object finds the library's rows whatever the order files start in.
// A row is written before the count that publishes it (release), and read after (acquire).
constinit std::array<FormulationInfo, kMaxFormulations> g_rows = table_of_product_rows();
constinit std::atomic<int> g_count{static_cast<int>(kProductRows.size())};
constinit std::mutex g_registering;

}  // namespace

std::span<const FormulationInfo> formulation_table() {
  return {g_rows.data(), static_cast<std::size_t>(g_count.load(std::memory_order_acquire))};
}

const FormulationInfo& formulation_info(Formulation f) { return g_rows[static_cast<std::size_t>(f)]; }

Formulation register_formulation(FormulationInfo row) {
  const std::string name(row.name);
  const auto refuse = [&](const std::string& why) {
    throw std::invalid_argument("register_formulation(\"" + name + "\"): " + why);
  };
  if (row.name.empty()) refuse("the row needs a name (its value of \"model.formulation\")");
  if (row.reference.empty()) refuse("the row needs a reference (the model's source, authors and year)");
  if (row.time_stepping && !row.make_stepper) refuse("a time-stepping row needs make_stepper");
  if (!row.time_stepping && row.make_stepper) refuse("a row without time steps builds no stepper");
  if ((row.memory_size == nullptr) != (row.start_memory == nullptr))
    refuse("memory_size and start_memory come together (both null: no memory)");
  if (row.lanes) refuse("lane steps are the library's own formulations' for now");
  if ((!row.model_gain.empty() || !row.joint_gain.empty()) && !row.scene_gains)
    refuse("a row naming a gain needs scene_gains (the scene's values of its gains)");
  if (row.joint_gain == "position") refuse("a joint's \"position\" is its start, not a gain");
  if (!row.memory_size) {
    row.memory_size = no_memory;
    row.start_memory = no_memory_start;
  }
  if (!row.read_params) row.read_params = no_params;

  const std::lock_guard<std::mutex> lock(g_registering);
  const int n = g_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i)
    if (g_rows[static_cast<std::size_t>(i)].name == row.name) refuse("the name is taken");
  if (n == kMaxFormulations) refuse("the table is full (" + std::to_string(kMaxFormulations) + " rows)");
  row.id = static_cast<Formulation>(n);
  g_rows[static_cast<std::size_t>(n)] = row;
  g_count.store(n + 1, std::memory_order_release);
  return row.id;
}

}  // namespace qs
