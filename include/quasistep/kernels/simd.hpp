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

// clang with libstdc++ 12 (and older): where() on AVX-512 masks makes one choice for the
// whole vector instead of one per lane (libstdc++'s _S_blend_avx512 under __clang__), so the
// lanes would compute wrong numbers. The project's CMake detects this and builds with
// -mno-avx512f; a program of your own that includes these headers must do the same.
#if defined(__clang__) && defined(__AVX512F__) && defined(_GLIBCXX_RELEASE) && _GLIBCXX_RELEASE <= 12
#error "quasistep: clang with libstdc++ <= 12 miscompiles <experimental/simd> where() for AVX-512; compile with -mno-avx512f"
#endif
