// Prints the size and alignment of every public type, one per line. tests/CMakeLists.txt
// builds it twice, with the library's instruction set and with the x86-64 baseline (SSE2),
// and a test compares the two lists: a program built without -march=native that links the
// library must see the same layouts, so no public type may depend on the lane width or the
// vector registers (the lanes, quasistep/kernels/lane.hpp Lane and the templates at T = Lane, stay
// inside the batch engine, behind its pointers).
#include <cstdio>

#include "quasistep/batch/batch_stepper.hpp"
#include "quasistep/batch/monte_carlo.hpp"
#include "quasistep/batch/rollout.hpp"
#include "quasistep/batch/world_batch.hpp"
#include "quasistep/core/contacts.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_lanes.hpp"
#include "quasistep/core/formulations/anitescu_qp/anitescu_qp.hpp"
#include "quasistep/core/formulations/ecp_ncp/ecp_ncp.hpp"
#include "quasistep/core/formulations/ecp_ncp/planar_sliding_reference.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lanes.hpp"
#include "quasistep/core/formulations/halm_posa_lcp/halm_posa_lcp.hpp"
#include "quasistep/core/formulations/pang_tedrake_miqp/pang_tedrake_miqp.hpp"
#include "quasistep/core/formulations/trinkle_lcp/trinkle_lcp.hpp"
#include "quasistep/core/formulations/ucp/ucp_scene.hpp"
#include "quasistep/core/limit_surface.hpp"
#include "quasistep/core/model.hpp"
#include "quasistep/core/scene.hpp"
#include "quasistep/core/step_certificate.hpp"
#include "quasistep/core/stepper.hpp"
#include "quasistep/core/world_params.hpp"
#include "quasistep/kernels/dense_lp.hpp"
#include "quasistep/kernels/dense_qp.hpp"
#include "quasistep/kernels/lcp_enumeration.hpp"
#include "quasistep/kernels/lemke.hpp"
#include "quasistep/kernels/lemke_lanes.hpp"
#include "quasistep/kernels/ncp_newton.hpp"
#include "quasistep/kernels/pgs.hpp"
#include "quasistep/kernels/ucp.hpp"

#define QS_PROBE(...) std::printf("%-40s %6zu %3zu\n", #__VA_ARGS__, sizeof(__VA_ARGS__), alignof(__VA_ARGS__))

int main() {
  using namespace qs;
  // core
  QS_PROBE(Model);
  QS_PROBE(State);
  QS_PROBE(WorldParams);
  QS_PROBE(ParameterRef);
  QS_PROBE(Scene);
  QS_PROBE(Body);
  QS_PROBE(Body3);
  QS_PROBE(Shape);
  QS_PROBE(Joint);
  QS_PROBE(Load);
  QS_PROBE(Load3);
  QS_PROBE(HalmPosaParams);
  QS_PROBE(AnitescuQpParams);
  QS_PROBE(PangTedrakeMiqpParams);
  QS_PROBE(EcpNcpParams);
  QS_PROBE(Schedule);
  QS_PROBE(StepReport);
  QS_PROBE(ContactFrame<double>);
  QS_PROBE(ContactWorkspace);
  QS_PROBE(ContactRecord);
  QS_PROBE(StepCertificate);
  QS_PROBE(StepCertifier);
  QS_PROBE(LimitSurfaceFromSupport);
  QS_PROBE(UcpScene);
  // steppers and their scalar templates
  QS_PROBE(TrinkleLcp);
  QS_PROBE(HalmPosaLcp);
  QS_PROBE(HalmPosaStepWorkspace<double>);
  QS_PROBE(AnitescuQp);
  QS_PROBE(AnitescuStepWorkspace<double>);
  QS_PROBE(PangTedrakeMiqp);
  QS_PROBE(EcpNcp);
  QS_PROBE(EcpStepProblem);
  QS_PROBE(PlanarSlidingReference);
  // batch
  QS_PROBE(WorldBatch);
  QS_PROBE(BatchStepper);
  QS_PROBE(BatchOptions);
  QS_PROBE(BatchCommands);
  QS_PROBE(Rollout);
  QS_PROBE(RolloutResult);
  QS_PROBE(McOptions);
  QS_PROBE(McRun);
  QS_PROBE(McSummary);
  // kernels
  QS_PROBE(Lemke<16>);
  QS_PROBE(Lemke<64>);
  QS_PROBE(Lemke<TrinkleLcp::kCapacity>);
  QS_PROBE(AnitescuQp::Solver);
  QS_PROBE(LemkeLanes<double>);
  QS_PROBE(LemkeLanesResult<double>);
  QS_PROBE(Pgs<double>);
  QS_PROBE(PgsResult<double>);
  QS_PROBE(PgsSettings);
  QS_PROBE(DenseQp);
  QS_PROBE(DenseLp);
  QS_PROBE(LcpEnumeration);
  QS_PROBE(NcpNewton<EcpNcp::kCapacity>);
  QS_PROBE(Ucp);
  QS_PROBE(UcpBilinear);
  QS_PROBE(UcpExact);
  return 0;
}
