/* The one place the C of CVipsShim learns its target (issue #57). Every file builds for x86-64 and aarch64
 * and gives the same bytes on both:
 *   - IPX_X86_KERNELS: 1 where hand-written x86 code (SSE2 intrinsics) may be used, on x86-64 unless the
 *     build asks for the portable twins (-DIPX_PORTABLE_KERNELS, how CI checks those twins on x86 too);
 *     every such block has a twin in GCC/clang vector extensions or plain C with the same operations in the
 *     same order;
 *   - IPX_CLONES_AVX2: a function attribute making an AVX2 copy beside the default one (GCC/clang function
 *     multi-versioning, chosen at load by the CPU), on x86-64 only; elsewhere nothing (one build, NEON from
 *     the vector extensions);
 *   - no contraction of a*b+c into a fused multiply-add: aarch64 compilers contract by default and the
 *     last bit would differ from x86-64's separate multiply and add (Package.swift also passes
 *     -ffp-contract=off; the pragmas keep any other build of these files the same). */
#ifndef IPX_PLATFORM_H
#define IPX_PLATFORM_H

#if defined(__x86_64__) && defined(__SSE2__) && !defined(IPX_PORTABLE_KERNELS)
#define IPX_X86_KERNELS 1
#else
#define IPX_X86_KERNELS 0
#endif

#if defined(__x86_64__) && !defined(IPX_PORTABLE_KERNELS)
#define IPX_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#else
#define IPX_CLONES_AVX2
#endif

#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#endif
