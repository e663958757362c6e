#pragma once

namespace qs {
/// The version written into every output file's provenance header.
inline constexpr const char* kVersion = QUASISTEP_VERSION;
}  // namespace qs
