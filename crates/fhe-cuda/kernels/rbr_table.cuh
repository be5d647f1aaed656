// The table of the batched RNS blind rotation and the two formulas read from it, shared by its
// kernels (kernels/rns_blind_rotate.cu) and the NTT passes that apply them as they load
// (FUSED_DIGIT and FUSED_MONO of ntt_pass.cuh): the exact RNS digit (fhe-math's `RnsGadget`) and
// the monomial factor X^a − 1 in NTT form. The table's layout is built by
// `kernels::rns_blind_rotate::tables` (Rust).
#pragma once
#include "common.cuh"

#define RBR_MAXL 8
#define RBR_LIMB 0       // per limb, 8 words: w_dec, w_dec', crt_hat lo, hi, w_own, w_own', group
#define RBR_GROUP 64     // per group, 8 words: lo, hi, Q_j lo, Q_j hi, Q_j/2 lo, hi, dprefix
#define RBR_HAT 128      // [i][k] (crt_hat_i mod q_k, shoup)
#define RBR_QJ 256       // [j][k] Q_j mod q_k
#define RBR_POW 320      // [s][2N] g_s^j
// exp table at RBR_POW + L·2N: [s][N]

// The factor X^a − 1 at evaluation point k of limb s (NTT form; `limbs` = L of the table):
// g_s^{a·exp[s][k] mod 2N} − 1, g_s = NTT(X)[0].
__device__ __forceinline__ u64 rbr_mono_factor(const u64* tab, u32 n, u32 limbs, u32 s, u64 k,
                                               u64 a, u64 q) {
    const u64 two_n = 2 * (u64)n;
    const u64* pw = tab + RBR_POW + (u64)s * two_n;
    const u64* ex = tab + RBR_POW + (u64)limbs * two_n + (u64)s * n;
    const u64 e = (a * ex[k]) & (two_n - 1);
    return mod_sub(pw[e], 1, q);
}

// Digit j of one coefficient, modulo the limb s outside its group G_j = [lo, hi): the residue of
// the integer d = Σ_{i∈G_j} y_i·(Q_j/q_i) − β·Q_j in (−Q_j/2, Q_j/2], with
// y_i = T_i·(Q/Q_j)^{-1}·(Q_j/q_i)^{-1} mod q_i and β counted from the exact 128-bit sum.
// `word(i)` gives T_{lo+i} at the coefficient. Exact modular arithmetic, canonical output: the
// same word whatever the order of the terms.
template <class W>
__device__ __forceinline__ u64 rbr_digit_residue(const u64* tab, const u64* slots, u32 j, u32 s,
                                                 W word) {
    const u64* grp = tab + RBR_GROUP + 8 * j;
    const u32 lo = (u32)grp[0], hi = (u32)grp[1];
    const u128 qj = (u128)grp[2] | ((u128)grp[3] << 64);
    const u128 half = (u128)grp[4] | ((u128)grp[5] << 64);
    const u64 q = slots[s * SLOT_STRIDE];
    u128 sum = 0;
    u32 beta = 0;
    u64 acc = 0;
    for (u32 i = lo; i < hi; i++) {
        const u64* li = tab + RBR_LIMB + 8 * i;
        const u64 y = mul_shoup(word(i - lo), li[0], li[1], slots[i * SLOT_STRIDE]);
        // Each term is below Q_j, so one subtraction keeps the sum below Q_j.
        sum += (u128)y * ((u128)li[2] | ((u128)li[3] << 64));
        if (sum >= qj) {
            sum -= qj;
            beta++;
        }
        const u64* h = tab + RBR_HAT + 2 * (i * RBR_MAXL + s);
        acc = mod_add(acc, mul_shoup(y, h[0], h[1], q), q);
    }
    if (sum > half) beta++;
    const u64 qjs = tab[RBR_QJ + j * RBR_MAXL + s];
    for (u32 b = 0; b < beta; b++) acc = mod_sub(acc, qjs, q);
    return acc;
}
