// Negacyclic NTT over all limbs of a limb set (fhe-math `NttTable` contract: forward takes
// natural-order coefficients to bit-reversed evaluations, inverse is its exact inverse with
// the n^-1 scaling). Canonical input and output; the result is unique, so it is bit-identical
// to the CPU's.
//
// Tables (by slot s, n entries each): fwd[s*n + k] = psi^brv(k), with Shoup companions;
// inv likewise for psi^-1; `consts[4*s..]` = n^-1, its Shoup companion, n^-1 * psi^(-n/2), its
// Shoup companion.
//
// Hierarchical design: a stage acts on one bit b of the coefficient index (pairs j, j | 2^b),
// twiddle index 2^(logn-1-b) + (j >> (b+1)). A pass runs the S stages of the bits
// [L, L+S) of the index in shared memory: a sub-problem is the 2^S elements that share the bits
// outside that range; a block loads C sub-problems (consecutive in the (high, low) bits, so
// global accesses are coalesced), runs radix-4 rounds (two stages per round, one barrier) and a
// radix-2 round when S is odd, and writes back. One launch per pass covers every limb.
// n <= 2^11 runs as one pass; larger n as two (forward: high bits then low bits; inverse: low
// bits then high bits).
//
// Lazy ranges stay inside the NTT: the forward keeps values in [0, 4q) between stages (and
// between its two passes), the inverse in [0, 2q); both end canonical (q < 2^61).
#include "common.cuh"
#include "moddown.cuh"

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

// One pass. Parameters: logn, S stages on bits [L, L+S), C = 2^logC sub-problems per block,
// `strided` (L > 0: local index mid * C + c; else c * 2^S + mid), `inverse`, `last` (the pass
// that ends the transform: canonical output). Block: any power-of-two thread count; dynamic
// shared memory C * 2^S words. Grid: x over groups of C sub-problems of a limb, y over limbs.
__device__ __forceinline__ void ntt_pass(const u64* src, u64* a, u32 s, const u64* slots,
                                         const u64* __restrict__ tw,
                                         const u64* __restrict__ tws, const u64* consts,
                                         u32 logn, u32 S, u32 L, u32 logC, bool inverse,
                                         bool last) {
    extern __shared__ u64 sh[];
    const u32 n = 1u << logn;
    const u64 q = slots[s * SLOT_STRIDE];
    const u64 two_q = 2 * q;
    const u64* __restrict__ w_tab = tw + (u64)s * n;
    const u64* __restrict__ ws_tab = tws + (u64)s * n;
    const u32 C = 1u << logC;
    const u32 E = C << S;
    const bool strided = L > 0;
    const u32 lmask = (1u << L) - 1;
    const u32 p0 = blockIdx.x * C; // first sub-problem of the block

    // Local index e -> global index.
    auto global = [&](u32 e) -> u32 {
        u32 c, mid;
        if (strided) {
            mid = e >> logC;
            c = e & (C - 1);
        } else {
            c = e >> S;
            mid = e & ((1u << S) - 1);
        }
        u32 p = p0 + c;
        return ((p >> L) << (S + L)) | (mid << L) | (p & lmask);
    };

#pragma unroll 4
    for (u32 e = threadIdx.x; e < E; e += blockDim.x) sh[e] = src[global(e)];
    __syncthreads();

    const u32 rounds4 = S / 2;
    const bool odd = S & 1;
    // Quads: (c, u) with u in [0, 2^(S-2)); pairs likewise with u in [0, 2^(S-1)).
    for (u32 r = 0; r < rounds4; r++) {
        // Lower bit of the two this round handles (local mid-bit numbering).
        u32 rb = inverse ? 2 * r : S - 2 - 2 * r;
        u32 d = strided ? (C << rb) : (1u << rb);
        u32 su = S - 2;
#pragma unroll 2
        for (u32 qd = threadIdx.x; qd < (E >> 2); qd += blockDim.x) {
            u32 c, uu;
            if (strided) {
                uu = qd >> logC;
                c = qd & (C - 1);
            } else {
                c = qd >> su;
                uu = qd & ((1u << su) - 1);
            }
            u32 mid0 = ((uu >> rb) << (rb + 2)) | (uu & ((1u << rb) - 1));
            u32 e0 = strided ? (mid0 << logC) + c : (c << S) + mid0;
            u32 p = p0 + c;
            u32 hi = p >> L;
            // Group index of the quad at the higher bit: j >> (L + rb + 2).
            u32 gq = (hi << (S - rb - 2)) | (mid0 >> (rb + 2));
            u64 x0 = sh[e0], x1 = sh[e0 + d], x2 = sh[e0 + 2 * d], x3 = sh[e0 + 3 * d];
            if (!inverse) {
                // Higher bit first: m = 2^(logn - 1 - (L + rb + 1)).
                u32 m = 1u << (logn - 2 - L - rb);
                u32 i1 = m + gq;
                u64 w = w_tab[i1], ws = ws_tab[i1];
                fwd_bf(x0, x2, w, ws, q, two_q);
                fwd_bf(x1, x3, w, ws, q, two_q);
                u32 i2 = 2 * m + 2 * gq;
                fwd_bf(x0, x1, w_tab[i2], ws_tab[i2], q, two_q);
                fwd_bf(x2, x3, w_tab[i2 + 1], ws_tab[i2 + 1], q, two_q);
                if (last && rb == 0 && !odd) {
                    x0 = csub(csub(x0, two_q), q);
                    x1 = csub(csub(x1, two_q), q);
                    x2 = csub(csub(x2, two_q), q);
                    x3 = csub(csub(x3, two_q), q);
                }
            } else {
                // Lower bit first: h = 2^(logn - 1 - (L + rb)).
                u32 h = 1u << (logn - 1 - L - rb);
                u32 i1 = h + 2 * gq;
                inv_bf(x0, x1, w_tab[i1], ws_tab[i1], q, two_q);
                inv_bf(x2, x3, w_tab[i1 + 1], ws_tab[i1 + 1], q, two_q);
                u32 h2 = h >> 1;
                if (h2 == 1) {
                    const u64* cs = consts + 4 * s;
                    inv_bf_last(x0, x2, cs, q, two_q);
                    inv_bf_last(x1, x3, cs, q, two_q);
                } else {
                    u32 i2 = h2 + gq;
                    u64 w = w_tab[i2], ws = ws_tab[i2];
                    inv_bf(x0, x2, w, ws, q, two_q);
                    inv_bf(x1, x3, w, ws, q, two_q);
                }
            }
            sh[e0] = x0;
            sh[e0 + d] = x1;
            sh[e0 + 2 * d] = x2;
            sh[e0 + 3 * d] = x3;
        }
        __syncthreads();
    }
    if (odd) {
        // Forward: the remaining bit is 0; inverse: the remaining bit is S - 1.
        u32 rb = inverse ? S - 1 : 0;
        u32 d = strided ? (C << rb) : (1u << rb);
        u32 su = S - 1;
#pragma unroll 2
        for (u32 pr = threadIdx.x; pr < (E >> 1); pr += blockDim.x) {
            u32 c, uu;
            if (strided) {
                uu = pr >> logC;
                c = pr & (C - 1);
            } else {
                c = pr >> su;
                uu = pr & ((1u << su) - 1);
            }
            u32 mid0 = ((uu >> rb) << (rb + 1)) | (uu & ((1u << rb) - 1));
            u32 e0 = strided ? (mid0 << logC) + c : (c << S) + mid0;
            u32 p = p0 + c;
            u32 hi = p >> L;
            u32 g = (hi << (S - rb - 1)) | (mid0 >> (rb + 1));
            u32 m = 1u << (logn - 1 - L - rb);
            u64 x0 = sh[e0], x1 = sh[e0 + d];
            if (!inverse) {
                fwd_bf(x0, x1, w_tab[m + g], ws_tab[m + g], q, two_q);
                if (last) {
                    x0 = csub(csub(x0, two_q), q);
                    x1 = csub(csub(x1, two_q), q);
                }
            } else if (m == 1) {
                inv_bf_last(x0, x1, consts + 4 * s, q, two_q);
            } else {
                inv_bf(x0, x1, w_tab[m + g], ws_tab[m + g], q, two_q);
            }
            sh[e0] = x0;
            sh[e0 + d] = x1;
        }
        __syncthreads();
    }

#pragma unroll 4
    for (u32 e = threadIdx.x; e < E; e += blockDim.x) a[global(e)] = sh[e];
}

// Up to MAX_LIST limbs, each read from src[i] and written to dst[i] (equal for in place), with
// the modulus of slot[i]. Mirrors `LimbList` in Rust.
#define MAX_LIST 128
struct LimbList {
    u64 src[MAX_LIST];
    u64 dst[MAX_LIST];
    u32 slot[MAX_LIST];
};

#if NTT_GENERIC
// Forward pass over limb blockIdx.y of the list: stages on bits [L, L+S) from the highest;
// `last` != 0 on the pass with bit 0.
extern "C" __global__ void ntt_forward_pass(LimbList ll, const u64* slots, const u64* tw,
                                            const u64* tw_shoup, u32 logn, u32 S, u32 L,
                                            u32 logC, u32 last) {
    pdl_wait();
    u32 i = blockIdx.y;
    ntt_pass((const u64*)ll.src[i], (u64*)ll.dst[i], ll.slot[i], slots, tw, tw_shoup, nullptr,
             logn, S, L, logC, false, last != 0);
}

// Inverse pass: stages on bits [L, L+S) from the lowest; the pass with bit logn-1 applies the
// n^-1 scaling and ends canonical.
extern "C" __global__ void ntt_inverse_pass(LimbList ll, const u64* slots, const u64* itw,
                                            const u64* itw_shoup, const u64* consts, u32 logn,
                                            u32 S, u32 L, u32 logC) {
    pdl_wait();
    u32 i = blockIdx.y;
    ntt_pass((const u64*)ll.src[i], (u64*)ll.dst[i], ll.slot[i], slots, itw, itw_shoup, consts,
             logn, S, L, logC, true, false);
}
#endif

// ---------------------------------------------------------------------------------------------
// Register-blocked pass (used for 3 <= S <= 11; twiddles read through the arithmetic's
// `twiddle_at`: (w, w_shoup) pairs, or doubles): each thread owns 8 elements of one sub-problem
// and runs up to three stages on them in registers (a radix-8 round), so a pass of S stages is
// ceil(S / 3) rounds with ceil(S / 3) - 1 shared-memory exchanges; the first round loads from
// global memory and the last stores to it directly. T = 2^(S-3) threads per sub-problem,
// C = 2^logC sub-problems per block. Same stages, same twiddles and same lazy ranges as
// `ntt_pass`, so the output is the same.
//
// Round windows (3 bits of the local index, [lo, lo + 3)): the forward runs the bits from the
// top, [S-3, S), [S-6, S-3), ..., and a last window [0, 3) that runs only the bits not yet done;
// the inverse from the bottom. In a window the element k of thread t has local index
// mid = ((t >> lo) << (lo + 3)) | (k << lo) | (t & (2^lo - 1)).
//
// Shared layout: strided (L > 0, lanes walk the sub-problems first) mid * (C + 1) + c;
// otherwise e + (e >> 3) with e = c * 2^S + mid (padding against bank conflicts).
//
// Forward passes also take `mode` (0 plain; a uniform branch), fusing CKKS's rescale around the
// NTT of the correction: bit RESCALE_LOAD reads the coefficient-form top limb y of the
// component at `src` and transforms ((y + q_l/2) mod q_i) - (q_l/2 mod q_i) instead
// (`elementwise_rescale_prepare`), bit RESCALE_STORE (on the last, non-strided pass only) writes
// a[j] <- (a[j] - ntt[j])·q_l^-1 into the output limb at `a` (`elementwise_rescale_finish`;
// `rconsts` = (value, shoup) pairs by slot), in coalesced order through `exchange_outputs`. The
// same residues as the separate kernels, two global round trips fewer.
// With `use_t` (BGV's modulus switch, the top limb already scaled by t^-1) the store is
// a[j] <- a[j]·q_l^-1 - ntt[j]·(t·q_l^-1) (`elementwise_rescale_finish_mod_t`; `tq` by slot).
// Non-strided rounds on the lowest 3 bits load and store their 8 consecutive words as 16-byte
// pairs.
#define RESCALE_LOAD 1u
#define RESCALE_STORE 2u
// Lifted limbs (fused kernels only): bits LIFT_SHIFT.. of a limb's slot word hold one plus the
// slot `f` whose modulus its input is reduced by; the first pass then transforms the centred
// lift ((y + q_f/2) mod q_f) mod q_i - (q_f/2 mod q_i) of each input word y, which is mod_up's
// conversion of a one-prime digit (and the rescale correction's lift, with f the top slot).
// Integer-path limbs whose source modulus is below 2q skip the reduction.
#define LIFT_SHIFT 16
#define LIFT_SLOT_MASK 0xffffu
// Converted limbs (fused kernels only): a lift field with CONVERT_FLAG set names a row of the
// conversion-row table (`FusedArgs::conv_rows`, CONVERT_ROW words: [D, h_out, h_0 .. h_{D-1}])
// instead of a source slot. The limb's input is then the D consecutive limbs (stride n) of a
// digit of D <= CONVERT_MAX_FROM primes, already holding v_i = (x_i + h_in_i)·q̂_i^-1 mod q_i
// (mod_up's inverse NTT writes them so, `offs` below), and the first pass transforms
//   (Σ_i v_i·h_i mod q) - h_out mod q,
// mod_up's fast basis conversion of the digit (`keyswitch_convert`, the same residues), so the
// raised limbs are never written in coefficient form.
// A row's first word holds D in its low byte and CONVERT_F64_SOURCES when every source prime is
// below 2^F64_FACTOR_BITS (common.cuh): an FP64-path target (q < 2^NTT_F64_BITS) then forms the sum in
// doubles (`convert_words_f64`), off the integer pipe. CONVERT_F64_WIDE_SOURCES, every source
// prime below 2^50, does the same for a target on the wide FP64 path (2^NTT_F64_BITS <= q <
// 2^NTT_F64_WIDE_BITS).
#define CONVERT_FLAG 0x8000u
#define CONVERT_ROW_MASK 0x7fffu
#define CONVERT_MAX_FROM 4
#define CONVERT_COUNT_MASK 0xffu
#define CONVERT_F64_SOURCES 0x100u
#define CONVERT_F64_WIDE_SOURCES 0x200u
// CONVERT_EXACT (mod_down's rows, `BasisConverter::convert_exact`): the sum drops the overflow
// alpha·Q, alpha = floor(F / 2^64), F = Σ_i (v_i·bhi_i + floor(v_i·blo_i / 2^64)) over the
// Barrett constants of the source slots, which start at bits CONVERT_SOURCE_SHIFT.. of the head;
// the row's last word holds Q mod q. Integer path only (such rows carry no FP64 flag).
#define CONVERT_EXACT 0x400u
// The FUSED template argument of the forward passes: the set of load and store paths a kernel
// compiles (0: plain). FUSED_LIFT: lifted loads; FUSED_CONVERT: converted loads; FUSED_EXACT:
// exact conversion rows too (`ntt_fwd_convert_exact_r8_S`); FUSED_COEF: with them and with
// lifted loads, the coefficient-form output subtracted (`FusedArgs::coef_delta`,
// `ntt_fwd_convert_coef_r8_S`, BFV's relinearization of a coefficient-form product only);
// FUSED_RESCALE: the rescale's modes; FUSED_TENSOR (the
// inverse kernel `ntt_inv_tensor_r8_S`): tensor-product loads (TENSOR_FLAG below); FUSED_ADD
// (the inverse kernel `ntt_inv_add_r8_S`): scaled-sum loads (ADD_FLAG below).
// A kernel compiles only the paths its launches may take, with one exception: the lifted
// kernel `ntt_fwd_fused_r8_S` keeps the converted loads, whose registers (80 instead of 54,
// three blocks an SM instead of four) measured faster for its launches (CAT_COMPAT's mod_up
// 145 against 147-154 µs; PERF.md, nineteenth session). The rescale's kernel without the
// conversion paths gained 4-11% (no spills).
#define FUSED_LIFT 1
#define FUSED_CONVERT 2
#define FUSED_EXACT 4
#define FUSED_RESCALE 8
#define FUSED_COEF 16
#define FUSED_TENSOR 32
#define FUSED_ADD 64
#define CONVERT_SOURCE_SHIFT 32
#define CONVERT_ROW (3 + CONVERT_MAX_FROM)
#define MAX_FUSED_SLOTS 64
// Arguments of the fused modes: the rescale constants ((value, shoup) pairs by slot), the level,
// for BGV t·q_l^-1 by slot, and the conversion rows of converted limbs. Mirrors `FusedArgs` in
// Rust.
struct FusedArgs {
    u64 rconsts;
    u32 level;
    u32 use_t;
    u64 conv_rows;
    // RESCALE_STORE reads the old word of `a` at a + src_delta (words): 0 in place, else the
    // input buffer's limb of the same slot (an out-of-place rescale, same layout).
    long long src_delta;
    u64 tq_w[MAX_FUSED_SLOTS];
    u64 tq_ws[MAX_FUSED_SLOTS];
    // Exact converted and lifted limbs (kernels of FUSED_COEF) subtract P·c, c the word at
    // a + coef_delta (words; the same element of a coefficient-form limb of slot s laid out
    // like `a`): mod_down of an output that is still in coefficient form (`convert_words`).
    long long coef_delta;
    // Tensor-product loads (FUSED_TENSOR): a limb whose lift field is TENSOR_FLAG | c reads
    // a_0 at its src and a_1, b_0, b_1 at src + tensor_delta[part][0..3] (words), part 1 from
    // slot tensor_split up (BFV's B limbs, read from another buffer than the Q limbs).
    long long tensor_delta[2][3];
    u32 tensor_split;
    u32 tensor_pad;
    // Scaled-sum loads (FUSED_ADD): a limb whose lift field is ADD_FLAG | c reads x at its src
    // and b at src + add_delta[c] (words) and transforms b + x·k mod q, k the (value, shoup)
    // pair of its slot at add_consts: mod_down's rescaled top limb out + acc·P^-1
    // (`keyswitch_mod_down_top`).
    long long add_delta[2];
    u64 add_consts;
    // The loading inverse passes (NTT_INV_LOADING) also store the words they form at
    // src + load_copy_delta (words; 0: no copy): multiply + relinearize's c_2 = a_1·b_1 in NTT
    // form, which its key product reads, written by the pass that forms it for mod_up.
    long long load_copy_delta;
};

// Tensor-product loads: component c of (a_0 b_0, a_0 b_1 + a_1 b_0, a_1 b_1) mod q at the E words
// of a thread, element k at gsrc[k << shift] (consecutive words, 16-byte loads, with VEC; the
// canonical words of `elementwise_tensor_pairs`).
#define TENSOR_FLAG 0x4000u
#define TENSOR_COMP_MASK 0x3u
template <int E>
__device__ __forceinline__ void tensor_load(u64 (&v)[E], const u64* g, u32 shift, bool vec) {
    if (vec) {
#pragma unroll
        for (int k = 0; k < E / 2; k++) {
            const ulonglong2 p = ((const ulonglong2*)g)[k];
            v[2 * k] = p.x;
            v[2 * k + 1] = p.y;
        }
    } else {
#pragma unroll
        for (int k = 0; k < E; k++) v[k] = g[(u64)k << shift];
    }
}
template <int E>
__device__ __forceinline__ void tensor_words(u64 (&w)[E], const u64* gsrc, u32 shift, bool vec,
                                             u32 comp, const long long* d, const Mod& m) {
    u64 x[E], y[E];
    if (comp == 1) {
        // a_0 b_1 + a_1 b_0 as one 128-bit sum (below 2^123), one reduction.
        u128 acc[E];
        tensor_load<E>(x, gsrc, shift, vec);
        tensor_load<E>(y, gsrc + d[2], shift, vec);
#pragma unroll
        for (int k = 0; k < E; k++) acc[k] = (u128)x[k] * y[k];
        tensor_load<E>(x, gsrc + d[0], shift, vec);
        tensor_load<E>(y, gsrc + d[1], shift, vec);
#pragma unroll
        for (int k = 0; k < E; k++) w[k] = reduce_u128(acc[k] + (u128)x[k] * y[k], m);
    } else {
        tensor_load<E>(x, comp == 0 ? gsrc : gsrc + d[0], shift, vec);
        tensor_load<E>(y, gsrc + d[comp == 0 ? 1 : 2], shift, vec);
#pragma unroll
        for (int k = 0; k < E; k++) w[k] = mod_mul(x[k], y[k], m);
    }
}

// Scaled-sum loads: w[i] = b_i + x_i·c mod q (Shoup, canonical; c = k[0], its companion k[1])
// for x_i at gsrc and b_i at gsrc + delta, element i at [i << shift] (16-byte loads with VEC):
// the words of `keyswitch_mod_down_top`.
#define ADD_FLAG 0x2000u
#define ADD_COMP_MASK 0x1u
template <int E>
__device__ __forceinline__ void add_scaled_words(u64 (&w)[E], const u64* gsrc, u32 shift, bool vec,
                                                 long long delta, const u64* k, u64 q) {
    u64 x[E], b[E];
    tensor_load<E>(x, gsrc, shift, vec);
    tensor_load<E>(b, gsrc + delta, shift, vec);
#pragma unroll
    for (int i = 0; i < E; i++) w[i] = mod_add(b[i], mul_shoup(x[i], k[0], k[1], q), q);
}

// The converted words of a limb (CONVERT_FLAG): w[k] holds source 0's word at the element's
// index, the other D - 1 sources lie n words apart from it (`gsrc[(k << shift)]` for source 0).
// The sums are exact in 128 bits (D·2^122 < 2^128), so the residue equals the conversion
// kernel's.
// With EXACT (the kernels of FUSED_EXACT only, so that the others keep their registers), an
// exact row (CONVERT_EXACT) adds alpha·(q - Q mod q) before the reduction (the sum stays below
// D·2^122 + 2^3·2^61 < 2^128), the same residue as `convert_exact`. With `coef` (exact rows
// only; mod_down's rows, whose source product Q is P) it also adds c_k·(q - P mod q) for the
// word c_k at coef[k << shift], one more term below 2^122: the residue of conv - P·c. mod_down's
// finish then yields (acc - NTT(conv - P·c))·P^-1 = NTT(c) + (acc - NTT(conv))·P^-1, the
// output's c in coefficient form added without its NTT.
template <int D, int E, bool EXACT>
__device__ __forceinline__ void convert_words(u64 (&w)[E], const u64* gsrc, u32 shift, u32 n,
                                              const u64* row, const Mod& m, const u64* slots,
                                              const u64* coef) {
    u64 h[D];
#pragma unroll
    for (int i = 0; i < D; i++) h[i] = row[2 + i];
    const u64 h_out = row[1];
    if (EXACT && (row[0] & CONVERT_EXACT)) {
        const u32 src0 = (u32)(row[0] >> CONVERT_SOURCE_SHIFT);
        u64 bhi[D], blo[D];
#pragma unroll
        for (int i = 0; i < D; i++) {
            bhi[i] = slots[(src0 + i) * SLOT_STRIDE + 1];
            blo[i] = slots[(src0 + i) * SLOT_STRIDE + 2];
        }
        const u64 q_comp = m.q - row[CONVERT_ROW - 1];
        // Element by element, each loading its own source words: the exact sums need two
        // accumulators, and holding all (D - 1)·E words first spilled at the register cap.
#pragma unroll
        for (int k = 0; k < E; k++) {
            u128 acc = (u128)w[k] * h[0];
            u128 f = (u128)w[k] * bhi[0] + __umul64hi(w[k], blo[0]);
#pragma unroll
            for (int i = 1; i < D; i++) {
                const u64 v = gsrc[(u64)i * n + ((u64)k << shift)];
                acc += (u128)v * h[i];
                f += (u128)v * bhi[i] + __umul64hi(v, blo[i]);
            }
            acc += (u128)(u64)(f >> 64) * q_comp;
            if (coef) acc += (u128)coef[(u64)k << shift] * q_comp;
            w[k] = mod_sub(reduce_u128(acc, m), h_out, m.q);
        }
        return;
    }
    u64 y[D - 1][E];
#pragma unroll
    for (int i = 1; i < D; i++)
#pragma unroll
        for (int k = 0; k < E; k++) y[i - 1][k] = gsrc[(u64)i * n + ((u64)k << shift)];
#pragma unroll
    for (int k = 0; k < E; k++) {
        u128 acc = (u128)w[k] * h[0];
#pragma unroll
        for (int i = 1; i < D; i++) acc += (u128)y[i - 1][k] * h[i];
        w[k] = mod_sub(reduce_u128(acc, m), h_out, m.q);
    }
}
// `convert_words` on the FP64 pipe, for a target q < 2^NTT_F64_BITS whose sources are all below
// 2^F64_FACTOR_BITS: x[k] = Σ_i (v_i·h_i mod q) - h_out as a signed double, each term
// `F64Arith::mul` (|term| < 0.52q, h_i < q, v_i < 2^46), so |x[k]| < (0.52·D + 1)·q <= 3.08q for
// D <= 4: inside the forward pass's input range (|x| < 4q, see `F64Arith`), and congruent to the
// integer path's word, so the pass's canonical output is the same.
// For a wide target (`F64WideArith`, q < 2^50) with sources below 2^50: each term is below
// (1/2 + 2^-52·v_i)·q < 0.75q, so |x[k]| < (0.75·D + 1)·q <= 4q < 2^52 for D <= 4 (every sum
// exact), and the wide forward round reduces its values before the first stage.
template <int D, int E, class A>
__device__ __forceinline__ void convert_words_f64(typename A::V (&x)[E], const u64 (&w)[E],
                                                  const u64* gsrc, u32 shift, u32 n,
                                                  const u64* row, const A& ar) {
    double h[D];
#pragma unroll
    for (int i = 0; i < D; i++) h[i] = A::from_u64(row[2 + i]);
    u64 y[D - 1][E];
#pragma unroll
    for (int i = 1; i < D; i++)
#pragma unroll
        for (int k = 0; k < E; k++) y[i - 1][k] = gsrc[(u64)i * n + ((u64)k << shift)];
    const double h_out = A::from_u64(row[1]);
#pragma unroll
    for (int k = 0; k < E; k++) {
        double acc = __dsub_rn(ar.mul(A::from_u64(w[k]), h[0]), h_out);
#pragma unroll
        for (int i = 1; i < D; i++) acc = __dadd_rn(acc, ar.mul(A::from_u64(y[i - 1][k]), h[i]));
        x[k] = acc;
    }
}
// After the last round of a non-strided pass (L = 0: the block covers one run of 8T elements,
// thread tid holding elements 8·tid + k in x[k]), y[i] <- element li[i] of the run, through
// the exchange buffer (padded index e + e/8): with li[i] = tid + T·i the block's global loads
// and stores that follow are coalesced.
__device__ __forceinline__ void exchange_outputs(const u64 (&x)[8], u64 (&y)[8],
                                                 const u32 (&li)[8]) {
    extern __shared__ u64 sh[];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const u32 el = 8 * threadIdx.x + k;
        sh[el + (el >> 3)] = x[k];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < 8; i++) y[i] = sh[li[i] + (li[i] >> 3)];
}

// Twiddle regions kept compacted in the double tables (tables.rs; `compaction` in
// kernels/ntt.rs mirrors this rule): in the pass of S stages over the low index bits (L = 0,
// radix-8 rounds), a stage whose thread reads 2^c twiddles, c = 2 - kb > 0, reads one and forms
// the rest (`twiddle_group`): the lowest stage (b = 0, n/2 twiddles) always, the next two (n/4
// and n/8) in passes of at least 8 stages (n = 2^16 and 2^17), where that measured 1-1.5%
// faster while at S = 7 (n = 2^15) it cost up to 6% on the rescale (PERF.md, twentieth session).
template <int S>
__host__ __device__ constexpr int compacted_log(int b, int kb) {
    return b == 0 || (S >= 8 && b < 3) ? 2 - kb : 0;
}

// One stage of a radix-8 round (8 elements a thread, its place kb in the window) over a
// compacted region starting at `start` (`compacted_log`): the thread's 2^(2 - kb) twiddles from
// one load (`twiddle_group`), then its butterflies, forward or inverse.
template <bool INV, class A>
__device__ __forceinline__ void compacted_stage(const A& ar, typename A::V (&x)[8],
                                                const ulonglong2* __restrict__ w_tab, u32 base,
                                                u32 start, int kb) {
    double wg[4];
    if (kb == 0) ar.template twiddle_group<2>(w_tab, base, start, wg);
    else ar.template twiddle_group<1>(w_tab, base, start, wg);
#pragma unroll
    for (int j = 0; j < (4 >> kb); j++)
#pragma unroll
        for (int i = 0; i < (1 << kb); i++) {
            const int k0 = (j << (kb + 1)) | i;
            if (INV) ar.inv(x[k0], x[k0 | (1 << kb)], wg[j]);
            else ar.fwd(x[k0], x[k0 | (1 << kb)], wg[j]);
        }
}

// With KEEP the last round leaves the thread's 8 outputs in `keep` (element k at global index
// goff + k) instead of storing them (the key product fused after the NTT), and the block
// transforms the sub-problems of block index `block` instead of blockIdx.x.
template <class A, int S, bool STRIDED, bool INV, int FUSED, bool TOP, bool KEEP>
__device__ __forceinline__ void ntt_pass_r8_impl(const A& ar, const u64* src, u64* a, u32 s,
                                                 const u64* slots,
                                                 const ulonglong2* __restrict__ twp,
                                                 const u64* consts, u32 logn, u32 L, u32 logC,
                                                 bool last, u32 mode, const FusedArgs& fa,
                                                 u64* keep, u32 block, u32 lift,
                                                 const u64* offs, long long copy_delta) {
    extern __shared__ u64 sh[];
    constexpr int R = 3;      // log2 of the elements per thread (radix-8 rounds)
    constexpr int E = 1 << R; // elements per thread
    constexpr u32 LT = S - R;
    constexpr int NR = (S + R - 1) / R;
    const u64 q = slots[s * SLOT_STRIDE];
    // This slot's twiddle table (2n words: pairs, or doubles then integers; `twiddle_at`).
    const ulonglong2* __restrict__ w_tab = twp + ((u64)s << logn);
    const u32 C = 1u << logC;
    u32 c, t;
    if (STRIDED) {
        c = threadIdx.x & (C - 1);
        t = threadIdx.x >> logC;
    } else {
        c = threadIdx.x >> LT;
        t = threadIdx.x & ((1u << LT) - 1);
    }
    const u32 p = (KEEP ? block : blockIdx.x) * C + c;
    const u32 hi = p >> L;
    const u32 lowp = p & ((1u << L) - 1);
    const u64 gbase = ((u64)hi << (S + L)) + lowp;
    // Shared index of element k of a round whose window starts at bit lo, with the round's
    // base mb (= mid of element 0): sidx(mb + (k << lo)) written so that the part depending on
    // k is a compile-time offset where it can be (the padding e >> 3 splits when lo >= 3).
    auto sh_index = [&](u32 mb, int k, int lo) -> u32 {
        if (STRIDED) return mb * (C + 1) + c + (u32)k * ((C + 1) << lo);
        const u32 e0 = (c << S) + mb;
        if (lo >= 3) return e0 + (e0 >> 3) + (u32)k * ((1u << lo) + (1u << (lo - 3)));
        const u32 e = e0 + ((u32)k << lo);
        return e + (e >> 3);
    };

    typename A::V x[E];
#pragma unroll
    for (int r = 0; r < NR; r++) {
        // Window and stage bits of this round (compile-time after unrolling).
        const int lo = INV ? (R * r < S - R ? R * r : S - R) : (S - R * (r + 1) > 0 ? S - R * (r + 1) : 0);
        const int b_lo = INV ? R * r : lo;                                   // lowest stage bit
        const int b_hi = INV ? (R * r + R < S ? R * r + R : S) : S - R * r;   // one past the top
        const u32 tlo = t & ((1u << lo) - 1);
        const u32 thi = t >> lo;
        const u32 mbase = (thi << (lo + R)) | tlo;
        // Element k of this thread: global index gbase + ((mbase + (k << lo)) << L), the bits of
        // the three terms disjoint, so one base pointer plus constant offsets.
        const u64 goff = gbase + ((u64)mbase << L);
        if (r == 0) {
            const u64* gsrc = src + goff;
            u64 w[E];
            if ((FUSED & FUSED_TENSOR) && (lift & TENSOR_FLAG)) {
                tensor_words<E>(
                    w, gsrc, lo + L, !STRIDED && lo == 0, lift & TENSOR_COMP_MASK,
                    fa.tensor_delta[s >= fa.tensor_split ? 1 : 0], load_mod(slots, s));
            } else if ((FUSED & FUSED_ADD) && (lift & ADD_FLAG)) {
                add_scaled_words<E>(w, gsrc, lo + L, !STRIDED && lo == 0,
                                    fa.add_delta[lift & ADD_COMP_MASK],
                                    (const u64*)fa.add_consts + 2 * s, q);
            } else if (!STRIDED && lo == 0) {
                // The thread's 8 elements are consecutive words (64-byte aligned): 4 16-byte
                // loads instead of 8.
                const ulonglong2* g2 = (const ulonglong2*)gsrc;
#pragma unroll
                for (int k = 0; k < E / 2; k++) {
                    const ulonglong2 v = KEEP ? load_last(g2 + k) : g2[k];
                    w[2 * k] = v.x;
                    w[2 * k + 1] = v.y;
                }
            } else {
#pragma unroll
                for (int k = 0; k < E; k++) {
                    // With KEEP (the fused key product, mod_down's finish) the pass reads a
                    // scratch buffer for the last time.
                    const u64* g = gsrc + ((u64)k << (lo + L));
                    w[k] = KEEP ? load_last(g) : *g;
                }
            }
            if (INV && copy_delta) {
                // The input words also go to src + copy_delta (the out-of-place rescale's
                // dropped limb, which keeps its input words; or the words a loading pass
                // formed, `FusedArgs::load_copy_delta`).
                u64* gcp = (u64*)gsrc + copy_delta;
                if (!STRIDED && lo == 0) {
#pragma unroll
                    for (int k = 0; k < E / 2; k++)
                        ((ulonglong2*)gcp)[k] = make_ulonglong2(w[2 * k], w[2 * k + 1]);
                } else {
#pragma unroll
                    for (int k = 0; k < E; k++) gcp[(u64)k << (lo + L)] = w[k];
                }
            }
            bool converted = false;
            if ((FUSED & FUSED_CONVERT) && (lift & CONVERT_FLAG)) {
                const u64* row = (const u64*)fa.conv_rows + (u64)(lift & CONVERT_ROW_MASK) * CONVERT_ROW;
                const u32 shift = lo + L, n = 1u << logn;
                const u32 head = (u32)row[0];
                if constexpr (A::IS_F64) {
                    if ((head & (A::IS_WIDE ? CONVERT_F64_WIDE_SOURCES : CONVERT_F64_SOURCES)) &&
                        !(head & CONVERT_EXACT)) {
                        converted = true;
                        switch (head & CONVERT_COUNT_MASK) {
                        case 2: convert_words_f64<2>(x, w, gsrc, shift, n, row, ar); break;
                        case 3: convert_words_f64<3>(x, w, gsrc, shift, n, row, ar); break;
                        default: convert_words_f64<4>(x, w, gsrc, shift, n, row, ar); break;
                        }
                    }
                }
                if (!converted) {
                    const Mod mi = load_mod(slots, s);
                    constexpr bool EX = (FUSED & FUSED_EXACT) != 0;
                    constexpr bool CO = (FUSED & FUSED_COEF) != 0;
                    const u64* coef = CO ? a + fa.coef_delta + goff : nullptr;
                    switch (head & CONVERT_COUNT_MASK) {
                    case 2: convert_words<2, E, EX>(w, gsrc, shift, n, row, mi, slots, coef); break;
                    case 3: convert_words<3, E, EX>(w, gsrc, shift, n, row, mi, slots, coef); break;
                    default: convert_words<4, E, EX>(w, gsrc, shift, n, row, mi, slots, coef); break;
                    }
                }
            } else if (((FUSED & FUSED_RESCALE) && (mode & RESCALE_LOAD)) ||
                       ((FUSED & FUSED_LIFT) && lift)) {
                // The centred lift from the modulus of slot `from` (the top limb's for the
                // rescale, the slot word's for a lifted limb).
                const u32 from = ((FUSED & FUSED_LIFT) && lift) ? lift - 1 : fa.level;
                const Mod mi = load_mod(slots, s);
                const u64 ql = slots[from * SLOT_STRIDE];
                const u64 half = ql >> 1;
                if (A::LAZY_INPUT && ql < 2 * q) {
                    // No reduction: y, or y - q_f + 2q above q_f/2 (the centred value plus
                    // 2q), is congruent to the lift and below 2q.
                    const u64 up = 2 * q - ql;
#pragma unroll
                    for (int k = 0; k < E; k++) w[k] = w[k] > half ? w[k] + up : w[k];
                } else {
                    const u64 half_i = reduce_u64(half, mi);
#pragma unroll
                    for (int k = 0; k < E; k++)
                        w[k] = mod_sub(reduce_u64(mod_add(w[k], half, ql), mi), half_i, q);
                }
                if constexpr ((FUSED & FUSED_COEF) != 0) {
                    // mod_down with one special prime P = q_from, its conversion the lift: minus
                    // P·c for the coefficient-form output word c (as `convert_words` does for
                    // exact rows), from w < 2q: w + c·(q - P mod q) < 2^125.
                    if (lift) {
                        const u64* coef = a + fa.coef_delta + goff;
                        const u64 p_comp = q - reduce_u64(ql, mi);
#pragma unroll
                        for (int k = 0; k < E; k++)
                            w[k] = reduce_u128((u128)coef[(u64)k << (lo + L)] * p_comp + w[k], mi);
                    }
                }
            }
            if (!converted) {
#pragma unroll
                for (int k = 0; k < E; k++) x[k] = ar.from_u64(w[k]);
            }
        } else {
            __syncthreads();
#pragma unroll
            for (int k = 0; k < E; k++) x[k] = ar.from_bits(sh[sh_index(mbase, k, lo)]);
        }
        if (INV) ar.inv_round_start(x);
        else ar.fwd_round_start(x);
        if (!INV) {
#pragma unroll
            for (int b = b_hi - 1; b >= b_lo; b--) {
                const int kb = b - lo;
                const u32 base = (1u << (logn - 1 - L - b)) + (hi << (S - b - 1)) +
                                 (thi << (R - 1 - kb));
                if constexpr (A::IS_F64 && !STRIDED) {
                    if (compacted_log<S>(b, kb) > 0) {
                        compacted_stage<false>(ar, x, w_tab, base, 1u << (logn - 1 - b), kb);
                        continue;
                    }
                }
#pragma unroll
                for (int j = 0; j < ((E / 2) >> kb); j++) {
                    const typename A::Tw wp = ar.twiddle_at(w_tab, base + j, 1u << logn);
#pragma unroll
                    for (int i = 0; i < (1 << kb); i++) {
                        const int k0 = (j << (kb + 1)) | i;
                        ar.fwd(x[k0], x[k0 | (1 << kb)], wp);
                    }
                }
            }
        } else {
#pragma unroll
            for (int b = b_lo; b < b_hi; b++) {
                const int kb = b - lo;
                const u32 h = 1u << (logn - 1 - L - b);
                // The transform's last stage (h = 1) is bit S - 1 of a pass with L + S = logn
                // (TOP), known at compile time so the other stages carry no second path.
                if (TOP && b == S - 1) {
                    const u64* cs = consts + 4 * s;
#pragma unroll
                    for (int k0 = 0; k0 < E; k0++)
                        if (!(k0 & (1 << kb))) ar.inv_last(x[k0], x[k0 | (1 << kb)], cs);
                } else {
                    const u32 base = h + (hi << (S - b - 1)) + (thi << (R - 1 - kb));
                    if constexpr (A::IS_F64 && !STRIDED) {
                        if (compacted_log<S>(b, kb) > 0) {
                            compacted_stage<true>(ar, x, w_tab, base, h, kb);
                            continue;
                        }
                    }
#pragma unroll
                    for (int j = 0; j < ((E / 2) >> kb); j++) {
                        const typename A::Tw wp = ar.twiddle_at(w_tab, base + j, 1u << logn);
#pragma unroll
                        for (int i = 0; i < (1 << kb); i++) {
                            const int k0 = (j << (kb + 1)) | i;
                            ar.inv(x[k0], x[k0 | (1 << kb)], wp);
                        }
                    }
                }
            }
        }
        if (r == NR - 1) {
            u64 o[E];
#pragma unroll
            for (int k = 0; k < E; k++) o[k] = ar.out(x[k], !INV && last);
            if (INV && TOP && offs) {
                // mod_up's prescaled inverse (the constants scaled by q̂^-1): add h_in·q̂^-1.
                const u64 off = offs[s];
#pragma unroll
                for (int k = 0; k < E; k++) o[k] = mod_add(o[k], off, q);
            }
            if (KEEP) {
#pragma unroll
                for (int k = 0; k < E; k++) keep[k] = o[k];
            } else if ((FUSED & FUSED_RESCALE) && !STRIDED && (mode & RESCALE_STORE)) {
                // The read-modify-write of `a` in coalesced order (L = 0 here).
                const u64* rc = (const u64*)fa.rconsts;
                const u64 c = rc[2 * s], cs = rc[2 * s + 1];
                const u32 T = blockDim.x;
                u32 li[E];
                u64 y[E];
#pragma unroll
                for (int i = 0; i < E; i++) li[i] = threadIdx.x + i * T;
                exchange_outputs(o, y, li);
                u64* pb = a + ((u64)blockIdx.x << (logC + S)) + threadIdx.x;
                const u64* rb = pb + fa.src_delta;
                // All old words are read before the first store (`pb` may alias `rb`, so a
                // load after a store would wait for it: one memory round trip an element).
                u64 r[E];
                if (fa.use_t) {
                    const u64 tw = fa.tq_w[s], tws = fa.tq_ws[s];
#pragma unroll
                    for (int i = 0; i < E; i++)
                        r[i] = mod_sub(mul_shoup(rb[(u64)i * T], c, cs, q),
                                       mul_shoup(y[i], tw, tws, q), q);
                } else {
#pragma unroll
                    for (int i = 0; i < E; i++)
                        r[i] = mul_shoup(mod_sub(rb[(u64)i * T], y[i], q), c, cs, q);
                }
#pragma unroll
                for (int i = 0; i < E; i++) pb[(u64)i * T] = r[i];
            } else {
                if (!STRIDED && lo == 0) {
                    ulonglong2* g2 = (ulonglong2*)(a + goff);
#pragma unroll
                    for (int k = 0; k < E / 2; k++) g2[k] = make_ulonglong2(o[2 * k], o[2 * k + 1]);
                } else {
#pragma unroll
                    for (int k = 0; k < E; k++) a[goff + ((u64)k << (lo + L))] = o[k];
                }
            }
        } else {
            if (r > 0) __syncthreads();
#pragma unroll
            for (int k = 0; k < E; k++) sh[sh_index(mbase, k, lo)] = ar.bits(x[k]);
        }
    }
}

// A register-blocked pass over limb slot `s`: `F64Arith` when its modulus is below
// 2^NTT_F64_BITS, `F64WideArith` below 2^NTT_F64_WIDE_BITS, else `IntArith` (a block-uniform
// branch; all give the same canonical outputs, and each accepts the others' intermediate words).
template <int S, bool STRIDED, bool INV, int FUSED = 0, bool TOP = false, bool KEEP = false>
__device__ __forceinline__ void ntt_pass_r8(const u64* src, u64* a, u32 s, const u64* slots,
                                            const ulonglong2* __restrict__ twp,
                                            const u64* consts, u32 logn, u32 L, u32 logC,
                                            bool last, u32 mode = 0, FusedArgs fa = {},
                                            u64* keep = nullptr, u32 block = 0, u32 lift = 0,
                                            const u64* offs = nullptr, long long copy_delta = 0) {
    if (slots[s * SLOT_STRIDE] < (1ull << NTT_F64_BITS)) {
        ntt_pass_r8_impl<F64Arith, S, STRIDED, INV, FUSED, TOP, KEEP>(
            F64Arith(slots, s), src, a, s, slots, twp, consts, logn, L, logC, last, mode, fa,
            keep, block, lift, offs, copy_delta);
        return;
    }
    if (slots[s * SLOT_STRIDE] < (1ull << NTT_F64_WIDE_BITS)) {
        ntt_pass_r8_impl<F64WideArith, S, STRIDED, INV, FUSED, TOP, KEEP>(
            F64WideArith(slots, s), src, a, s, slots, twp, consts, logn, L, logC, last, mode,
            fa, keep, block, lift, offs, copy_delta);
        return;
    }
    ntt_pass_r8_impl<IntArith, S, STRIDED, INV, FUSED, TOP, KEEP>(
            IntArith(slots, s), src, a, s, slots, twp, consts, logn, L, logC, last, mode, fa,
            keep, block, lift, offs, copy_delta);
}

// The register-blocked kernels for S stages: ntt_fwd_r8_S, ntt_fwd_fused_r8_S (the fused modes,
// separate so the plain kernel stays lean) and ntt_inv_r8_S. Inverse: TOP (the pass holding the
// n^-1 stage) is L + S == logn, the strided pass of a two-pass transform or a single pass.
// (16 elements per thread, one shared exchange per 8-stage pass, was tried: NVRTC kept the array
// in local memory and the NTT ran 2.5x slower; PERF.md.)
// The fused forward kernel `NAME` for S stages with the set F of fused paths (FUSED_*), with
// the launch attribute ATTR.
#define NTT_FWD_FUSED(NAME, S, ATTR, F)                                                          \
    extern "C" __global__ void ATTR NAME(LimbList ll, const u64* slots, const ulonglong2* twp,   \
                                         u32 logn, u32 L, u32 logC, u32 last, u32 mode,          \
                                         FusedArgs fa) {                                         \
        pdl_wait();                                                                              \
        u32 i = blockIdx.y;                                                                      \
        const u64* src = (const u64*)ll.src[i];                                                  \
        u64* dst = (u64*)ll.dst[i];                                                              \
        const u32 s = ll.slot[i] & LIFT_SLOT_MASK, lift = ll.slot[i] >> LIFT_SHIFT;              \
        if (L > 0)                                                                               \
            ntt_pass_r8<S, true, false, F>(src, dst, s, slots, twp, nullptr, logn, L, logC,      \
                                           last != 0, mode, fa, nullptr, 0, lift);               \
        else                                                                                     \
            ntt_pass_r8<S, false, false, F>(src, dst, s, slots, twp, nullptr, logn, L, logC,     \
                                            last != 0, mode, fa, nullptr, 0, lift);              \
    }
// The rescale's copy of the fused kernel (`ntt_fwd_rescale_r8_S`, CKKS rescale and BGV's modulus
// switch) is held to NTT_RESCALE_MAXNREG registers: 64 let it keep 50% of the warps instead of
// 37% and took 5% off the rescale at N = 2^16 (PERF.md), while the same cap on the mod_up loads
// cost 1% at CAT_COMPAT.
#define NTT_RESCALE_MAXNREG 64
// Its copy for first passes that convert digits on load (`ntt_fwd_convert_r8_S`, mod_up with
// digits of two to four primes) likewise: 64 registers instead of 76 give four blocks of 256 an
// SM instead of three, which took 1–4 µs off BGV PHANTOM_INT, CKKS CAT and PHANTOM_N16 key
// switches (H200, PERF.md), while for lifted one-prime digits (CAT_COMPAT)
// the same cap cost 2%.
#define NTT_CONVERT_MAXNREG 64
// The first inverse pass (L = 0) `NAME` for S stages whose loads take the paths of the set F
// (FUSED_TENSOR or FUSED_ADD) on the limbs whose slot word says so, plain loads on the others.
#define NTT_INV_LOADING(NAME, S, F)                                                              \
    extern "C" __global__ void NAME(LimbList ll, const u64* slots, const ulonglong2* twp,        \
                                    const u64* consts, u32 logn, u32 L, u32 logC, FusedArgs fa) {\
        pdl_wait();                                                                              \
        u32 i = blockIdx.y;                                                                      \
        const u64* src = (const u64*)ll.src[i];                                                  \
        u64* dst = (u64*)ll.dst[i];                                                              \
        const u32 s = ll.slot[i] & LIFT_SLOT_MASK, lift = ll.slot[i] >> LIFT_SHIFT;              \
        if (S == logn)                                                                           \
            ntt_pass_r8<S, false, true, F, true>(src, dst, s, slots, twp, consts, logn, L, logC, \
                                                 false, 0, fa, nullptr, 0, lift, nullptr,        \
                                                 fa.load_copy_delta);                            \
        else                                                                                     \
            ntt_pass_r8<S, false, true, F>(src, dst, s, slots, twp, consts, logn, L, logC,       \
                                           false, 0, fa, nullptr, 0, lift, nullptr,              \
                                           fa.load_copy_delta);                                  \
    }
#define NTT_R8(S)                                                                                \
    extern "C" __global__ void ntt_fwd_r8_##S(LimbList ll, const u64* slots,                     \
                                             const ulonglong2* twp, u32 logn, u32 L, u32 logC,   \
                                             u32 last) {                                         \
        pdl_wait();                                                                              \
        u32 i = blockIdx.y;                                                                      \
        const u64* src = (const u64*)ll.src[i];                                                  \
        u64* dst = (u64*)ll.dst[i];                                                              \
        if (L > 0)                                                                               \
            ntt_pass_r8<S, true, false>(src, dst, ll.slot[i], slots, twp, nullptr, logn, L,      \
                                        logC, last != 0);                                        \
        else                                                                                     \
            ntt_pass_r8<S, false, false>(src, dst, ll.slot[i], slots, twp, nullptr, logn, L,     \
                                         logC, last != 0);                                       \
    }                                                                                            \
    NTT_FWD_FUSED(ntt_fwd_fused_r8_##S, S, , FUSED_LIFT | FUSED_CONVERT)                        \
    NTT_FWD_FUSED(ntt_fwd_convert_r8_##S, S, __maxnreg__(NTT_CONVERT_MAXNREG),                  \
                  FUSED_LIFT | FUSED_CONVERT)                                                    \
    NTT_FWD_FUSED(ntt_fwd_convert_exact_r8_##S, S, __maxnreg__(NTT_CONVERT_MAXNREG),            \
                  FUSED_LIFT | FUSED_CONVERT | FUSED_EXACT)                                      \
    NTT_FWD_FUSED(ntt_fwd_convert_coef_r8_##S, S, __maxnreg__(NTT_CONVERT_MAXNREG),             \
                  FUSED_LIFT | FUSED_CONVERT | FUSED_EXACT | FUSED_COEF)                         \
    NTT_FWD_FUSED(ntt_fwd_rescale_r8_##S, S, __maxnreg__(NTT_RESCALE_MAXNREG), FUSED_RESCALE)   \
    /* copy_delta (words, 0 for none): the first pass also copies its input words there. */     \
    extern "C" __global__ void ntt_inv_r8_##S(LimbList ll, const u64* slots,                     \
                                             const ulonglong2* twp, const u64* consts,           \
                                             const u64* offs, u32 logn, u32 L, u32 logC,         \
                                             long long copy_delta) {                             \
        pdl_wait();                                                                              \
        u32 i = blockIdx.y;                                                                      \
        const u64* src = (const u64*)ll.src[i];                                                  \
        u64* dst = (u64*)ll.dst[i];                                                              \
        if (L > 0)                                                                               \
            ntt_pass_r8<S, true, true, false, true>(src, dst, ll.slot[i], slots, twp, consts,    \
                                                    logn, L, logC, false, 0, {}, nullptr, 0, 0,  \
                                                    offs);                                       \
        else if (S == logn)                                                                      \
            ntt_pass_r8<S, false, true, false, true>(src, dst, ll.slot[i], slots, twp, consts,   \
                                                     logn, L, logC, false, 0, {}, nullptr, 0, 0, \
                                                     offs, copy_delta);                          \
        else                                                                                     \
            ntt_pass_r8<S, false, true>(src, dst, ll.slot[i], slots, twp, consts, logn, L, logC, \
                                        false, 0, {}, nullptr, 0, 0, nullptr, copy_delta);       \
    }                                                                                            \
    /* The first inverse pass (L = 0) with tensor-product loads (FUSED_TENSOR): BFV's product; */\
    /* with scaled-sum loads (FUSED_ADD): mod_down's rescaled top limb. */                       \
    NTT_INV_LOADING(ntt_inv_tensor_r8_##S, S, FUSED_TENSOR)                                      \
    NTT_INV_LOADING(ntt_inv_add_r8_##S, S, FUSED_ADD)


// ---------------------------------------------------------------------------------------------
// The last forward pass of mod_up fused with the key product, with an optional automorphism.
// Grid row i is slot kl.slot[i]; for every digit j the block runs the last (non-strided, L = 0)
// pass of ext_j's limb of that slot, keeping the outputs on chip, or, for the digit that
// owns the slot (kl.own[i] == j), reads the input's NTT-form limb instead (mod_up's copy of
// it is skipped), then
//   acc_c[k] = (Σ_j ext_j[map[k]]·key_{2j+c}[k]) mod q   (c = 0, 1; map[k] = k without `map`;
// exact 128-bit sums, one Barrett reduction), the same values as the last pass followed by
// `keyswitch_key_product` with `assign`: the NTT-form digits are never written to memory.
// An automorphism's NTT-form map sends each aligned run of 2^b indices onto another one (the
// run fixes the low bits of brv(k), hence of the odd exponent g·(2·brv(k)+1) mod 2n), so the
// block producing the outputs [base, base + E) transforms the source run holding map[base].
#define MAX_KP 64
#define NO_DIGIT 0xffffffffu
// Mirrors `KeyProdList` in Rust.
struct KeyProdList {
    u32 slot[MAX_KP];
    u32 own[MAX_KP];
};
// Buffers of the fused key product (mirrors `KeyProdArgs` in Rust): the raised digits (`ext`,
// ext_spc slots per digit, first pass done), the key (2·digits components, key_spc slots each),
// the input component (`input`: its limb of slot s at input + s·n), the 2-component
// accumulator (acc_spc slots per component) and the automorphism's index map (0: none).
// With `prod_a` (multiply + relinearize, no map), the rows of slots below `prod_slots` also
// add P·(c_0, c_1) of the product of the ciphertexts prod_a and prod_b (2 components,
// prod_a_spc / prod_b_spc slots each; `p_mod_q`: P mod q by slot), so that mod_down's finish
// yields c_c + (acc_c - conv_c)·P^-1 without reading c_0, c_1 (`FinishArgs::prod_slots`).
struct KeyProdArgs {
    u64 ext;
    u64 key;
    u64 input;
    u64 acc;
    u64 map;
    u32 ext_spc;
    u32 key_spc;
    u32 acc_spc;
    u32 digits;
    u64 prod_a;
    u64 prod_b;
    u64 p_mod_q;
    u32 prod_a_spc;
    u32 prod_b_spc;
    u32 prod_slots;
    u32 pad;
};
template <int S>
__device__ __forceinline__ void ntt_key_product(const KeyProdList& kl, const KeyProdArgs& ka,
                                                const u64* slots, const ulonglong2* twp,
                                                u32 logn, u32 logC) {
    extern __shared__ u64 sh[];
    const u32 s = kl.slot[blockIdx.y];
    const u32 own = kl.own[blockIdx.y];
    const u64 n = 1ull << logn;
    const u32 T = blockDim.x;
    // The block's outputs are the E = 8T consecutive words from `base` (C sub-problems of 2^S,
    // L = 0); output tid + T·i (i < 8) is the product of source element src_base + li[i]. The
    // last round leaves source element 8·tid + k in x[k] of thread tid, so the outputs go
    // through the exchange buffer (padded index e + e/8): loads and stores stay coalesced.
    const u32 logE = logC + S;
    const u64 base = (u64)blockIdx.x << logE;
    const u32* map = (const u32*)ka.map;
    const u32 src_block = map ? map[base] >> logE : blockIdx.x;
    const u64 src_base = (u64)src_block << logE;
    u32 li[8];
#pragma unroll
    for (int i = 0; i < 8; i++)
        li[i] = map ? map[base + threadIdx.x + i * T] - (u32)src_base : threadIdx.x + i * T;
    // The 16 sums of a thread (8 elements, 2 components) live in shared memory after the
    // exchange buffer (its 8T·9/8 words, rounded up to 16 bytes): 128-bit sums in registers
    // would take 64 of them and leave a fifth of the warps.
    const u32 words = (8 * T * 9 / 8 + 1) & ~1u;
    ulonglong2* sums = (ulonglong2*)(sh + words) + threadIdx.x;
    for (u32 j = 0; j < ka.digits; j++) {
        u64 y[8];
        if (j == own) {
            const u64* in = (const u64*)ka.input + (u64)s * n + src_base;
#pragma unroll
            for (int i = 0; i < 8; i++) y[i] = in[li[i]];
        } else {
            // The previous digit's reads of the exchange buffer end first (block-uniform).
            if (j > 0) __syncthreads();
            const u64* e = (const u64*)ka.ext + ((u64)j * ka.ext_spc + s) * n;
            u64 x[8];
            ntt_pass_r8<S, false, false, false, false, true>(e, nullptr, s, slots, twp, nullptr,
                                                              logn, 0, logC, true, 0, {}, x,
                                                              src_block);
            exchange_outputs(x, y, li);
        }
        const u64* k0 = (const u64*)ka.key + ((u64)(2 * j) * ka.key_spc + s) * n + base +
                        threadIdx.x;
        const u64* k1 = k0 + (u64)ka.key_spc * n;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            u128 p0 = (u128)y[i] * load_once(k0 + (u64)i * T);
            u128 p1 = (u128)y[i] * load_once(k1 + (u64)i * T);
            ulonglong2* a0 = sums + (2 * i) * T;
            ulonglong2* a1 = a0 + T;
            if (j > 0) {
                const ulonglong2 v0 = *a0, v1 = *a1;
                p0 += ((u128)v0.y << 64) | v0.x;
                p1 += ((u128)v1.y << 64) | v1.x;
            }
            *a0 = make_ulonglong2((u64)p0, (u64)(p0 >> 64));
            *a1 = make_ulonglong2((u64)p1, (u64)(p1 >> 64));
        }
    }
    const Mod m = load_mod(slots, s);
    u64* o0 = (u64*)ka.acc + (u64)s * n + base + threadIdx.x;
    u64* o1 = o0 + (u64)ka.acc_spc * n;
    if (ka.prod_a && s < ka.prod_slots) {
        // + P·(a_0·b_0, a_0·b_1 + a_1·b_0) mod q: one more term below q^2 < 2^122 beside the
        // digits' products (each below q^2): exact in 128 bits for up to 62 digits.
        const u64 pq = ((const u64*)ka.p_mod_q)[s];
        const u64* a0 = (const u64*)ka.prod_a + (u64)s * n + base + threadIdx.x;
        const u64* a1 = a0 + (u64)ka.prod_a_spc * n;
        const u64* b0 = (const u64*)ka.prod_b + (u64)s * n + base + threadIdx.x;
        const u64* b1 = b0 + (u64)ka.prod_b_spc * n;
#pragma unroll
        for (int i = 0; i < 8; i++) {
            const u64 x0 = a0[(u64)i * T], x1 = a1[(u64)i * T];
            const u64 y0 = b0[(u64)i * T], y1 = b1[(u64)i * T];
            const u64 d0 = mod_mul(x0, y0, m);
            const u64 d1 = reduce_u128((u128)x0 * y1 + (u128)x1 * y0, m);
            const ulonglong2 v0 = sums[(2 * i) * T], v1 = sums[(2 * i + 1) * T];
            o0[(u64)i * T] = reduce_u128((((u128)v0.y << 64) | v0.x) + (u128)pq * d0, m);
            o1[(u64)i * T] = reduce_u128((((u128)v1.y << 64) | v1.x) + (u128)pq * d1, m);
        }
        return;
    }
#pragma unroll
    for (int i = 0; i < 8; i++) {
        const ulonglong2 v0 = sums[(2 * i) * T], v1 = sums[(2 * i + 1) * T];
        o0[(u64)i * T] = reduce_u128(((u128)v0.y << 64) | v0.x, m);
        o1[(u64)i * T] = reduce_u128(((u128)v1.y << 64) | v1.x, m);
    }
}

#define NTT_KEYPROD(S)                                                                           \
    extern "C" __global__ void __launch_bounds__(128, 6)                                         \
        ntt_keyprod_r8_##S(KeyProdList kl, KeyProdArgs ka,                                       \
                                                 const u64* slots, const ulonglong2* twp,        \
                                                 u32 logn, u32 logC) {                           \
        pdl_wait();                                                                              \
        ntt_key_product<S>(kl, ka, slots, twp, logn, logC);                                      \
    }

// ---------------------------------------------------------------------------------------------
// The last forward pass of mod_down's converted limbs fused with mod_down's last step: block row
// i is limb i of `conv` (first pass done; component and slot from the set), the pass keeps its
// outputs z in registers and the block writes, at the same coefficients of `out`:
//   FINISH_PLAIN    out + mod_down_term(acc, z)            (`keyswitch_mod_down_finish`)
//   FINISH_RESCALE  mod_down_rescale_value(out, acc, z)    (`keyswitch_mod_down_rescale_finish`)
//   FINISH_ROT      src[map[k]] (component 0 only) + mod_down_term(acc, z)
//                                                          (`keyswitch_mod_down_finish_rot`)
// The same residues as the NTT followed by that kernel, without storing and reloading z.
#define FINISH_PLAIN 0u
#define FINISH_RESCALE 1u
#define FINISH_ROT 2u
// Mirrors `FinishArgs` in Rust: `out`, `acc` and `conv` with the same limbs (2 components at
// out's level), `src` the one-component set of c_0 (rotation), the automorphism's index map,
// P^-1 and the rescale constants ((value, shoup) pairs by slot), and t·P^-1 (BGV, `use_t`).
// `prod_slots`: out's limbs of slots below it are not read (taken as zero): the key product
// added the product's c_0, c_1 there (`KeyProdArgs::prod_a`).
struct FinishArgs {
    LimbSet out;
    LimbSet acc;
    LimbSet conv;
    LimbSet src;
    u64 map;
    u64 pinv;
    u64 rs;
    u32 level;
    u32 mode;
    u32 use_t;
    u32 prod_slots;
    SlotPairs tp;
};
template <int S>
__device__ __forceinline__ void ntt_finish(const FinishArgs& fa, const u64* slots,
                                           const ulonglong2* twp, u32 logn, u32 logC) {
    const u32 idx = blockIdx.y;
    const u32 T = blockDim.x;
    u32 comp, s;
    limbset_locate(fa.conv, idx, comp, s);
    u64 x[8], z[8];
    ntt_pass_r8<S, false, false, false, false, true>(limbset_ptr(fa.conv, idx), nullptr, s, slots,
                                                      twp, nullptr, logn, 0, logC, true, 0, {},
                                                      x, blockIdx.x);
    // The block's run of 8T elements from `base`; element tid + T·i in z[i] (coalesced).
    u32 li[8];
#pragma unroll
    for (int i = 0; i < 8; i++) li[i] = threadIdx.x + i * T;
    exchange_outputs(x, z, li);
    const u64 base = ((u64)blockIdx.x << (logC + S)) + threadIdx.x;
    const u64 q = slots[s * SLOT_STRIDE];
    const u64* pinv = (const u64*)fa.pinv;
    u64* o = limbset_ptr(fa.out, idx) + base;
    const u64* a = limbset_ptr(fa.acc, idx) + base; // last read here (`load_last`)
    const bool fresh = s < fa.prod_slots;
    if (fa.mode == FINISH_RESCALE) {
#pragma unroll
        for (int i = 0; i < 8; i++)
            o[i * T] = mod_down_rescale_value(fresh ? 0 : o[i * T], load_last(a + i * T), z[i], s,
                                              fa.level, pinv, (const u64*)fa.rs, q);
    } else if (fa.mode == FINISH_ROT) {
        const u32* map = (const u32*)fa.map + base;
        const u64* src = idx < fa.out.q_cnt + fa.out.p_cnt ? limbset_ptr(fa.src, idx) : nullptr;
#pragma unroll
        for (int i = 0; i < 8; i++)
            o[i * T] = mod_add(src ? src[map[i * T]] : 0,
                               mod_down_term(load_last(a + i * T), z[i], s, pinv, fa.tp,
                                             fa.use_t, q),
                               q);
    } else {
#pragma unroll
        for (int i = 0; i < 8; i++)
            o[i * T] = mod_add(fresh ? 0 : o[i * T],
                               mod_down_term(load_last(a + i * T), z[i], s, pinv, fa.tp,
                                             fa.use_t, q),
                               q);
    }
}

#define NTT_FINISH(S)                                                                            \
    extern "C" __global__ void ntt_finish_r8_##S(FinishArgs fa, const u64* slots,                \
                                                const ulonglong2* twp, u32 logn, u32 logC) {     \
        pdl_wait();                                                                              \
        ntt_finish<S>(fa, slots, twp, logn, logC);                                               \
    }

// ---------------------------------------------------------------------------------------------
// Instantiations. The module is compiled in parts, one per S (kernels::units): each part defines
// NTT_S_MIN = NTT_S_MAX = S, and the part of S = 3 also the generic passes (NTT_GENERIC), so
// NVRTC compiles the parts in parallel. Without the defines one program holds every kernel.
#ifndef NTT_S_MIN
#define NTT_S_MIN 3
#endif
#ifndef NTT_S_MAX
#define NTT_S_MAX 11
#endif
#define NTT_INSTANTIATE(S) NTT_R8(S) NTT_KEYPROD(S) NTT_FINISH(S)
#if NTT_S_MIN <= 3 && 3 <= NTT_S_MAX
NTT_INSTANTIATE(3)
#endif
#if NTT_S_MIN <= 4 && 4 <= NTT_S_MAX
NTT_INSTANTIATE(4)
#endif
#if NTT_S_MIN <= 5 && 5 <= NTT_S_MAX
NTT_INSTANTIATE(5)
#endif
#if NTT_S_MIN <= 6 && 6 <= NTT_S_MAX
NTT_INSTANTIATE(6)
#endif
#if NTT_S_MIN <= 7 && 7 <= NTT_S_MAX
NTT_INSTANTIATE(7)
#endif
#if NTT_S_MIN <= 8 && 8 <= NTT_S_MAX
NTT_INSTANTIATE(8)
#endif
#if NTT_S_MIN <= 9 && 9 <= NTT_S_MAX
NTT_INSTANTIATE(9)
#endif
#if NTT_S_MIN <= 10 && 10 <= NTT_S_MAX
NTT_INSTANTIATE(10)
#endif
#if NTT_S_MIN <= 11 && 11 <= NTT_S_MAX
NTT_INSTANTIATE(11)
#endif
