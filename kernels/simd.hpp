// <experimental/simd> for the project: include it through this header only.
//
// GCC 12 warns falsely inside its own AVX-512 intrinsics when the simd operations are
// inlined into project code: -W(maybe-)uninitialized on _mm512_undefined_* (GCC bug 105593,
// fixed in 13; seen from _mm512_sqrt_pd). A diagnostic pragma applies to the code between
// push and pop, and GCC checks each function of an inlining chain, so silencing the warnings
// around this include silences them for the simd header's code only: project code stays
// checked. The header must be first included here (once included, a later pragma region
// does not cover it).
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <experimental/simd>
#pragma GCC diagnostic pop
#else
#include <experimental/simd>
#endif
