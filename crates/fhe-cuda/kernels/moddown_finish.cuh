// mod_down's last forward NTT pass fused with its last step (`ntt_finish_r8_S`; part of the
// `ntt` module, kernels/ntt.cu; launch wrappers in src/kernels/moddown_finish.rs). It owns
// mod_down's output (plain, rescaled, or with a rotation's automorphism).
#pragma once
#include "ntt_pass.cuh"
#include "moddown.cuh"

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

