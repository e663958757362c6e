// Lemke's solver for the small capacities, compiled once (kernels/lemke.hpp says why).
#include "quasistep/kernels/lemke.hpp"

namespace qs {

template class Lemke<4>;
template class Lemke<8>;
template class Lemke<16>;
template class Lemke<32>;

}  // namespace qs
