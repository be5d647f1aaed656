// What the batched RNS blind rotation's kernels share (rns_blind_rotate.cu, and the fused last
// forward pass with the multiply-accumulate of rbr_mac.cuh in the ntt module): the table's
// layout, the launch shape, X^a in NTT form.
#pragma once
#include "common.cuh"

#define RBR_MAXL 8
#define RBR_LIMB 0       // per limb, 8 words: w_dec, w_dec', crt_hat lo, hi, w_own, w_own', group
#define RBR_GROUP 64     // per group, 8 words: lo, hi, Q_j lo, Q_j hi, Q_j/2 lo, hi, dprefix
#define RBR_HAT 128      // [i][k] (crt_hat_i mod q_k, shoup)
#define RBR_QJ 256       // [j][k] Q_j mod q_k
#define RBR_POW 320      // [s][2N] g_s^j
// exp table at RBR_POW + L·2N: [s][N]

struct RbrShape {
    u32 n;      // ring degree
    u32 limbs;  // L
    u32 digits; // D
    u32 dtot;   // Σ_j (L − |G_j|)
    u32 count;  // batch size
    u32 comps;  // components decomposed a sample (2 in the blind rotation, 1 in the packing)
};

// X^a at evaluation point k of limb s (NTT form).
__device__ __forceinline__ u64 rbr_monomial(const u64* tab, const RbrShape& sh, u32 s, u32 k,
                                            u64 a) {
    const u64 two_n = 2 * (u64)sh.n;
    const u64* pw = tab + RBR_POW + (u64)s * two_n;
    const u64* ex = tab + RBR_POW + (u64)sh.limbs * two_n + (u64)s * sh.n;
    return pw[(a * ex[k]) & (two_n - 1)];
}
