// The x86 intrinsics headers, first included here with GCC 12's false warnings silenced.
// Every translation unit of the project starts with this header (CMake passes it with
// -include for GCC < 13), so no other include can reach the intrinsics first.
//
// GCC 12 warns inside its own intrinsics when <experimental/simd> (or Eigen's packet code,
// in a program that vectorises Eigen)
// is inlined into project code: -W(maybe-)uninitialized on _mm512_undefined_* in
// avx512fintrin.h (GCC bug 105593, fixed in 13; 1,297 reports in an AVX-512 build) and
// -Warray-bounds on the unaligned 256-bit loads Eigen uses for partial packets of small
// fixed-size vectors (avxintrin.h; 9 reports with AVX2). A diagnostic pragma covers the
// lines between push and pop, and GCC checks each function of an inlining chain, so the
// warnings are off for the intrinsics' own lines only: project code, Eigen's included,
// stays checked with warnings as errors.
#pragma once

#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13 && (defined(__x86_64__) || defined(__i386__))
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Warray-bounds"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif
