// Lemke's solver for the large capacities, compiled once (kernels/lemke.hpp says why): 64,
// the time-stepping formulations' LCP capacity, and 128, the CLI's `lcp` command's.
#include "quasistep/kernels/lemke.hpp"

namespace qs {

template class Lemke<64>;
template class Lemke<128>;

}  // namespace qs
