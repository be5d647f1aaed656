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
#include "ntt_arith.cuh"


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

// A regular batch of in-place limbs (the strided entries ntt_fwd_strided_r8_S and
// ntt_inv_strided_r8_S): limb x < count at base + x·2^logn words, modulus of slot[x % period]
// (period <= STRIDED_MAX_PERIOD), x = blockIdx.y + gridDim.y·blockIdx.z (blocks with x >= count
// return at once, whole). One launch a pass for any number of limbs, where a LimbList takes at
// most MAX_LIST. Mirrors `StridedBatch` in Rust.
#define STRIDED_MAX_PERIOD 64
struct StridedBatch {
    u64 base;
    u32 count;
    u32 period;
    u32 slot[STRIDED_MAX_PERIOD];
};

// The address and slot of this block's limb of `sb`, or false when the block has none.
__device__ __forceinline__ bool strided_limb(const StridedBatch& sb, u32 logn, u64*& a, u32& s) {
    const u32 x = blockIdx.y + gridDim.y * blockIdx.z;
    if (x >= sb.count) return false;
    a = (u64*)sb.base + ((u64)x << logn);
    s = sb.slot[x % sb.period];
    return true;
}

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

#include "ntt_pass.cuh"

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
    /* The same passes over a StridedBatch (in place): the same ntt_pass_r8 calls, so the */    \
    /* same words as ntt_fwd_r8_S / ntt_inv_r8_S on a LimbList of those limbs. */               \
    extern "C" __global__ void ntt_fwd_strided_r8_##S(StridedBatch sb, const u64* slots,         \
                                                     const ulonglong2* twp, u32 logn, u32 L,     \
                                                     u32 logC, u32 last) {                       \
        pdl_wait();                                                                              \
        u64* a;                                                                                  \
        u32 s;                                                                                   \
        if (!strided_limb(sb, logn, a, s)) return;                                               \
        if (L > 0)                                                                               \
            ntt_pass_r8<S, true, false>(a, a, s, slots, twp, nullptr, logn, L, logC, last != 0); \
        else                                                                                     \
            ntt_pass_r8<S, false, false>(a, a, s, slots, twp, nullptr, logn, L, logC,            \
                                         last != 0);                                             \
    }                                                                                            \
    extern "C" __global__ void ntt_inv_strided_r8_##S(StridedBatch sb, const u64* slots,         \
                                                     const ulonglong2* twp, const u64* consts,   \
                                                     u32 logn, u32 L, u32 logC) {                \
        pdl_wait();                                                                              \
        u64* a;                                                                                  \
        u32 s;                                                                                   \
        if (!strided_limb(sb, logn, a, s)) return;                                               \
        if (L > 0)                                                                               \
            ntt_pass_r8<S, true, true, false, true>(a, a, s, slots, twp, consts, logn, L, logC,  \
                                                    false);                                      \
        else if (S == logn)                                                                      \
            ntt_pass_r8<S, false, true, false, true>(a, a, s, slots, twp, consts, logn, L, logC, \
                                                     false);                                     \
        else                                                                                     \
            ntt_pass_r8<S, false, true>(a, a, s, slots, twp, consts, logn, L, logC, false);      \
    }                                                                                            \
    /* The first inverse pass (L = 0) with tensor-product loads (FUSED_TENSOR): BFV's product; */\
    /* with scaled-sum loads (FUSED_ADD): mod_down's rescaled top limb. */                       \
    NTT_INV_LOADING(ntt_inv_tensor_r8_##S, S, FUSED_TENSOR)                                      \
    NTT_INV_LOADING(ntt_inv_add_r8_##S, S, FUSED_ADD)


#include "keyprod.cuh"
#include "rbr_mac.cuh"
#include "moddown_finish.cuh"

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
#define NTT_INSTANTIATE(S) NTT_R8(S) NTT_KEYPROD(S) NTT_FINISH(S) NTT_RBR_MAC(S)
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
