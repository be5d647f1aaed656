// The NTT butterflies and the arithmetic types of the register-blocked passes: `IntArith` (Shoup
// butterflies, lazy ranges), `F64Arith` and `F64WideArith` (double-precision butterflies for
// moduli below 2^NTT_F64_BITS and 2^NTT_F64_WIDE_BITS). Part of the `ntt` module (kernels/ntt.cu).
#pragma once
#include "common.cuh"

// a * w mod q in [0, 2q) for any a < 2^64 (Shoup, lazy).
__device__ __forceinline__ u64 mul_shoup_lazy(u64 a, u64 w, u64 ws, u64 q) {
    return a * w - __umul64hi(a, ws) * q;
}

// Forward (Cooley-Tukey) butterfly, lazy: x, y in [0, 4q) -> [0, 4q).
__device__ __forceinline__ void fwd_bf(u64& x, u64& y, u64 w, u64 ws, u64 q, u64 two_q) {
    u64 u = csub(x, two_q);
    u64 v = mul_shoup_lazy(y, w, ws, q);
    x = u + v;
    y = u + two_q - v;
}

// Inverse (Gentleman-Sande) butterfly, lazy: x, y in [0, 2q) -> [0, 2q).
__device__ __forceinline__ void inv_bf(u64& x, u64& y, u64 w, u64 ws, u64 q, u64 two_q) {
    u64 u = x, v = y;
    x = csub(u + v, two_q);
    y = mul_shoup_lazy(u + two_q - v, w, ws, q);
}

// Last inverse stage with the n^-1 scaling: canonical outputs.
__device__ __forceinline__ void inv_bf_last(u64& x, u64& y, const u64* c, u64 q, u64 two_q) {
    u64 u = x, v = y;
    x = csub(mul_shoup_lazy(u + v, c[0], c[1], q), q);
    y = csub(mul_shoup_lazy(u + two_q - v, c[2], c[3], q), q);
}

// ---------------------------------------------------------------------------------------------
// Butterfly arithmetic of the register-blocked passes: two implementations behind one
// interface; a pass picks one per limb (block-uniform) from its modulus.
//
// `IntArith`: u64 words, Shoup twiddles, the lazy ranges stated at the top of this file.
//
// `F64Arith`, for moduli q < 2^NTT_F64_BITS (default 42, the CKKS scaling primes and small
// plaintext moduli): the same residues computed exactly in double precision, where the FP64
// pipe issues a butterfly in 8 instructions against about 24 for the Shoup butterfly (H200
// microbenchmark in PERF.md: 2.2-2.5x the butterflies per second). Values are integers held
// exactly in doubles (|x| < 2^46 < 2^53), signed and lazy. For w < q < 2^42 and |y| < 2^46:
//   w·y mod q:  hi = fl(w·y), lo = w·y - hi exactly (FMA two-product); quot = rint(hi·fl(1/q))
//               (the 1.5·2^52 rounding trick, |hi/q| < 2^46 < 2^51), within 1/2 + 2^-7 of hi/q
//               (the relative error of fl(1/q) and of the product is below 2^-53); r = hi -
//               quot·q exactly (FMA: an integer below 2^53), |r| <= (1/2 + 2^-7)·q; result
//               r + lo with |lo| <= ulp(hi)/2 <= 2^-53·q·|y| <= 2^-7·q: |w·y mod q| < 0.52·q.
//   reduce:     x - rint(x·fl(1/q))·q for |x| < 2^46: |result| <= (1/2 + 2^-7)·q < 0.51·q.
//   forward: x ± (w·y mod q), at most 11 stages per pass from inputs below 4q: |x| < 10q < 2^46.
//   inverse: every round starts by reducing its 8 values to |x| < 0.51q; three stages at most
//            double the sums three times: |x| < 4.2q.
// Every pass ends canonical (reduce, add q when negative), so its output is a valid input of
// either implementation (and of `ntt_pass`), and the transform's result is the same unique
// residue vector: bit-identical to the CPU. Every operation is a correctly rounded IEEE
// operation written as an intrinsic (`__fma_rn`, `__dmul_rn`, `__dadd_rn`), so no contraction
// or reassociation can change it.
// (The launches in kernels/ntt.rs mirror the default as `NTT_F64_BITS` to pick block shapes.)
//
// `F64Arith<true>` (wide), for 2^NTT_F64_BITS <= q < 2^NTT_F64_WIDE_BITS (at most 50: BGV/BFV's
// 50-bit primes): the same operations with tighter ranges. For w < q < 2^50 and |y| < 2^51,
// `mul` (the quotient hi·fl(1/q) below 2^51, where the rounding trick holds) gives
// |w·y mod q| <= q/2 + 2^-52·q·|y| < (1/2 + c/4)·q for |y| = c·q, since 2^-52·q < 1/4. So:
//   forward: every round starts by reducing its 8 values (|x| < 0.51q); its three stages give
//            |x| < 1.14q, 1.93q, 2.91q, and the multiplicands (|y| < 1.93q < 2^51) stay in range;
//   inverse: every round starts by reducing, and each stage's sum is reduced as well (a sum of
//            two values below 0.94q would leave the range two stages on): |x| < 0.76q, 0.88q,
//            0.94q, multiplicands below 1.88q < 2^51.
// All values are integers below 2^52 in magnitude, so every sum is exact; a CPU model test
// (`f64_wide_rounds_stay_in_range`) checks the bounds round by round. The extra reductions cost
// 3 FP64 operations per value and round, against about 24 integer instructions per Shoup
// butterfly saved (H100, PERF.md: BGV/BFV key switching at PHANTOM_INT 2-4% faster than the
// integer butterflies). The launches in kernels/ntt.rs mirror both bounds as `NTT_F64_BITS` and
// `NTT_F64_WIDE_BITS`. The converting first pass forms a wide target's sums in doubles too when
// its digit's primes are below 2^50 (`convert_words_f64`, CONVERT_F64_WIDE_SOURCES).
#define NTT_F64_BITS 42
// The generic passes ntt_forward_pass / ntt_inverse_pass (see the instantiations at the end).
#ifndef NTT_GENERIC
#define NTT_GENERIC 1
#endif
#define NTT_F64_WIDE_BITS 50
#if NTT_F64_WIDE_BITS > 50
#error "NTT_F64_WIDE_BITS above 50: the wide FP64 butterflies' bounds need q < 2^50"
#endif
// (The primitives are in common.cuh: f64_from_u64, f64_reduce, f64_mul_mod, f64_canonical.)

// The twiddle tables `twp` hold 2n words a slot: (twiddle, Shoup companion) pairs, or on slots
// below 2^TABLE_F64_BITS (tables.rs, `runs_in_f64`; mirrored by the Rust constant
// NTT_F64_WIDE_BITS) the n twiddles as doubles followed by the n integer twiddles. The
// double-precision passes read the doubles (8 bytes a twiddle where a pair takes 16: the last
// passes read about n twiddles a limb).
#define TABLE_F64_BITS 50
#if TABLE_F64_BITS != NTT_F64_WIDE_BITS
#error "every slot with double twiddles must run the FP64 butterflies"
#endif

struct IntArith {
    typedef u64 V;
    static constexpr bool IS_F64 = false;
    static constexpr bool IS_WIDE = false;
    // The forward passes take inputs in [0, 4q), not only canonical ones.
    static constexpr bool LAZY_INPUT = true;
    u64 q, two_q;
    __device__ __forceinline__ IntArith(const u64* slots, u32 s)
        : q(slots[s * SLOT_STRIDE]), two_q(2 * slots[s * SLOT_STRIDE]) {}
    __device__ __forceinline__ u64 companion(ulonglong2 w) const { return w.y; }
    // Twiddle i of the slot's table `t` of n entries: a (twiddle, companion) pair.
    typedef ulonglong2 Tw;
    __device__ __forceinline__ static Tw twiddle_at(const ulonglong2* __restrict__ t, u32 i,
                                                    u32) {
        return __ldg(t + i);
    }
    __device__ __forceinline__ V from_u64(u64 x) const { return x; }
    __device__ __forceinline__ u64 bits(V x) const { return x; }
    __device__ __forceinline__ V from_bits(u64 b) const { return b; }
    __device__ __forceinline__ void fwd(V& x, V& y, ulonglong2 w) const {
        fwd_bf(x, y, w.x, companion(w), q, two_q);
    }
    __device__ __forceinline__ void inv(V& x, V& y, ulonglong2 w) const {
        inv_bf(x, y, w.x, companion(w), q, two_q);
    }
    __device__ __forceinline__ void inv_last(V& x, V& y, const u64* c) const {
        inv_bf_last(x, y, c, q, two_q);
    }
    template <int E>
    __device__ __forceinline__ void inv_round_start(V (&)[E]) const {}
    template <int E>
    __device__ __forceinline__ void fwd_round_start(V (&)[E]) const {}
    // A pass's output word: canonical after the forward's last stage, else the lazy value.
    __device__ __forceinline__ u64 out(V x, bool fwd_last) const {
        return fwd_last ? csub(csub(x, two_q), q) : x;
    }
};

template <bool WIDE>
struct F64ArithT {
    typedef double V;
    static constexpr bool IS_F64 = true;
    static constexpr bool IS_WIDE = WIDE;
    static constexpr bool LAZY_INPUT = false;
    double q, qinv;
    __device__ __forceinline__ F64ArithT(const u64* slots, u32 s)
        : q(from_u64(slots[s * SLOT_STRIDE])),
          qinv(__longlong_as_double((long long)slots[s * SLOT_STRIDE + 3])) {}
    // Exact for x < 2^52.
    __device__ __forceinline__ static V from_u64(u64 x) { return f64_from_u64(x); }
    __device__ __forceinline__ u64 bits(V x) const { return (u64)__double_as_longlong(x); }
    __device__ __forceinline__ V from_bits(u64 b) const { return __longlong_as_double((long long)b); }
    // x - rint(x/q)·q: |result| < 0.51q for |x| < 2^46.
    __device__ __forceinline__ V reduce(V x) const { return f64_reduce(x, q, qinv); }
    // w·y mod q, signed, |result| < 0.52q for |y| < 2^46 (see above).
    __device__ __forceinline__ V mul(V y, double w) const { return f64_mul_mod(y, w, q, qinv); }
    // Twiddle i of the slot's table: its first n words hold the twiddles as doubles
    // (TABLE_F64_BITS), 8 bytes a twiddle.
    typedef double Tw;
    __device__ __forceinline__ static Tw twiddle_at(const ulonglong2* __restrict__ t, u32 i, u32) {
        return __ldg((const double*)t + i);
    }
    // The 2^c twiddles base + j (j < 2^c) of a stage whose region [start, 2·start) the table
    // keeps compacted by 2^c (`compacted_log`): with base -
    // start a multiple of 2^c, tw[base + j] = tw[base]·tw[j], since the bits of brv(base) and
    // brv(j) are disjoint. The table holds tw[start + 2^c·i] at start + i (tables.rs), so a
    // thread loads one twiddle instead of 2^c; the products are signed residues below 0.52q,
    // valid multiplicands of `mul`.
    template <int C>
    __device__ __forceinline__ void twiddle_group(const ulonglong2* __restrict__ t, u32 base,
                                                  u32 start, double* w) const {
        const double* d = (const double*)t;
        w[0] = __ldg(d + start + ((base - start) >> C));
#pragma unroll
        for (int j = 1; j < (1 << C); j++) w[j] = mul(w[0], __ldg(d + j));
    }
    __device__ __forceinline__ void fwd(V& x, V& y, double w) const {
        const double v = mul(y, w);
        const double u = x;
        x = __dadd_rn(u, v);
        y = __dsub_rn(u, v);
    }
    __device__ __forceinline__ void inv(V& x, V& y, double w) const {
        const double u = x, v = y;
        x = WIDE ? reduce(__dadd_rn(u, v)) : __dadd_rn(u, v);
        y = mul(__dsub_rn(u, v), w);
    }
    // The n^-1 stage: c = [n^-1, shoup, n^-1·psi^(-n/2), shoup].
    __device__ __forceinline__ void inv_last(V& x, V& y, const u64* c) const {
        const double u = x, v = y;
        x = mul(__dadd_rn(u, v), from_u64(c[0]));
        y = mul(__dsub_rn(u, v), from_u64(c[2]));
    }
    template <int E>
    __device__ __forceinline__ void inv_round_start(V (&x)[E]) const {
#pragma unroll
        for (int k = 0; k < E; k++) x[k] = reduce(x[k]);
    }
    template <int E>
    __device__ __forceinline__ void fwd_round_start(V (&x)[E]) const {
        if (WIDE) inv_round_start(x);
    }
    // Canonical always: reduce, then add q to a negative value (exact: an integer of |.| < q).
    __device__ __forceinline__ u64 out(V x, bool) const { return f64_canonical(x, q, qinv); }
};
typedef F64ArithT<false> F64Arith;
typedef F64ArithT<true> F64WideArith;
