// The last step of mod_down: combining the accumulator, the NTT-form conversion of its P part
// and the output, per residue. Shared by the finish kernels of keyswitch.cu and the forward NTT
// pass fused with them (ntt.cu).
#pragma once
#include "common.cuh"

// Constants by slot, with Shoup companions, passed by value (the layout of `Scalars` in
// elementwise.cu, indexed by slot here).
#define MAX_SLOT_PAIRS 64
struct SlotPairs {
    u64 w[MAX_SLOT_PAIRS];
    u64 ws[MAX_SLOT_PAIRS];
};

// The term mod_down adds at slot s: (acc - conv)·P^-1 mod q_s, or, preserving a message mod t
// (BGV, `use_t`; `conv` is then the conversion of t^-1·acc_P), acc·P^-1 - conv·(t·P^-1) with
// t·P^-1 in `tp` by slot: the residues of t·(t^-1·acc - conv)·P^-1. `pinv` holds
// (value, shoup) pairs of P^-1 by slot.
__device__ __forceinline__ u64 mod_down_term(u64 a, u64 c, u32 s, const u64* pinv,
                                             const SlotPairs& tp, u32 use_t, u64 q) {
    if (use_t)
        return mod_sub(mul_shoup(a, pinv[2 * s], pinv[2 * s + 1], q),
                       mul_shoup(c, tp.w[s], tp.ws[s], q), q);
    return mul_shoup(mod_sub(a, c, q), pinv[2 * s], pinv[2 * s + 1], q);
}

// mod_down fused with the rescale, the top limb's rounded word (coefficient form): with w the
// top limb of out + acc·P^-1 and conv_l the conversion of the P part at q_l,
// y = w - conv_l·P^-1 mod q_l (the top limb of the mod_down result) plus q_l/2 (`half`), which
// each lower target reduces mod q_i. Shared by the conversion kernels and the prepare step.
__device__ __forceinline__ u64 mod_down_rescale_rounded(u64 w, u64 conv_l, const u64* pinv,
                                                        u32 level, u64 half, u64 ql) {
    const u64 y = mod_sub(w, mul_shoup(conv_l, pinv[2 * level], pinv[2 * level + 1], ql), ql);
    return mod_add(y, half, ql);
}

// mod_down fused with the rescale, last step at slot s < level (NTT form):
// (out + acc·P^-1 - z)·q_l^-1 with `rs` the rescale constants (value, shoup) by slot; slot
// `level` (dropped) keeps the plain mod_down result out + (acc - z)·P^-1 (z is conv there), as on
// the CPU for CKKS (BGV's switch leaves another value there; a dropped limb is not part of the
// result).
__device__ __forceinline__ u64 mod_down_rescale_value(u64 o, u64 x, u64 z, u32 s, u32 level,
                                                      const u64* pinv, const u64* rs, u64 q) {
    if (s == level) return mod_add(o, mul_shoup(mod_sub(x, z, q), pinv[2 * s], pinv[2 * s + 1], q), q);
    const u64 a = mul_shoup(x, pinv[2 * s], pinv[2 * s + 1], q);
    return mul_shoup(mod_sub(mod_add(o, a, q), z, q), rs[2 * s], rs[2 * s + 1], q);
}
