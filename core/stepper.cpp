#include "core/stepper.hpp"

#include "core/halm_posa_lcp.hpp"
#include "core/trinkle_lcp.hpp"

namespace qs {

std::unique_ptr<Stepper> make_stepper(const Model& m) {
  switch (m.formulation) {
    case Formulation::trinkle_lcp: return std::make_unique<TrinkleLcp>(m);
    case Formulation::perfect_velocity_lcp:
    case Formulation::halm_posa_lcp: return std::make_unique<HalmPosaLcp>(m);
    default: return nullptr;  // the MIQP, UCP, Anitescu and ECP issues add theirs
  }
}

}  // namespace qs
