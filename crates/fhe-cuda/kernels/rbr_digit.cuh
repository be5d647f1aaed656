// The exact RNS digit of the batched RNS blind rotation (fhe-math's `RnsGadget`), shared by
// `rns_blind_rotate_decompose` (kernels/rns_blind_rotate.cu) and the forward NTT pass that forms
// the digits as it loads them (`ntt_fwd_strided_digit_r8_S`, FUSED_DIGIT of ntt_pass.cuh).
// The table's layout is built by `kernels::rns_blind_rotate::tables` (Rust).
#pragma once
#include "common.cuh"

#define RBR_MAXL 8
#define RBR_LIMB 0       // per limb, 8 words: w_dec, w_dec', crt_hat lo, hi, w_own, w_own', group
#define RBR_GROUP 64     // per group, 8 words: lo, hi, Q_j lo, Q_j hi, Q_j/2 lo, hi, dprefix
#define RBR_HAT 128      // [i][k] (crt_hat_i mod q_k, shoup)
#define RBR_QJ 256       // [j][k] Q_j mod q_k
#define RBR_POW 320      // [s][2N] g_s^j
// exp table at RBR_POW + L·2N: [s][N]

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
