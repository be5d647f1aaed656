// BFV scale-and-round, step 3 of fhe-math's `scale_round` (HPS with 64-bit fixed point): from
// the tensor d over Q ∪ B (coefficient form) to r_k = ⌊t·d/Q⌉ mod b_k (before the ⌊B/2⌋ shift,
// which the B -> Q conversion adds as its input offset). Integer-only, the same sums as
// `ScaleRoundTables::scale_round_component`, so the bits match the CPU.
#include "common.cuh"

// Targets (B limbs) per block: their sums stay in registers.
#define SR_TARGETS 8

// d: [3][ql + bl][n]; r: [3][bl][n]. slots: Q slots 0..ql then B slots ql..ql+bl.
// qbhat: (QB/q_i)^-1 mod q_i for i < ql, then their Shoup companions; theta: ⌊θ_i·2^64⌋;
// omega: [k][i] ⌊t·B/q_i⌋ mod b_k; tqinv: t·Q^-1 mod b_k.
// Grid: x over coefficients, y over groups of SR_TARGETS targets, z over the 3 components.
extern "C" __global__ void scale_round_to_b(const u64* d, u32 n, u32 ql, u32 bl,
                                            const u64* qbhat, const u64* theta,
                                            const u64* omega, const u64* tqinv, u64* r,
                                            const u64* slots) {
    pdl_wait();
    u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const u32 c = blockIdx.z;
    const u32 total = ql + bl;
    const u64* dc = d + (u64)c * total * n;
    const u32 k0 = blockIdx.y * SR_TARGETS;
    const u32 kc = min((u32)SR_TARGETS, bl - k0);
    u128 acc[SR_TARGETS];
#pragma unroll
    for (u32 t = 0; t < SR_TARGETS; t++) acc[t] = 0;
    u128 hi = 0, lo = 0;
    for (u32 i = 0; i < ql; i++) {
        u64 q = slots[i * SLOT_STRIDE];
        u64 y = mul_shoup(dc[(u64)i * n + j], qbhat[i], qbhat[ql + i], q);
        u128 p = (u128)y * theta[i];
        hi += p >> 64;
        lo += (u64)p;
        const u64* col = omega + (u64)k0 * ql + i;
#pragma unroll
        for (u32 t = 0; t < SR_TARGETS; t++)
            if (t < kc) acc[t] += (u128)y * col[(u64)t * ql];
    }
    const u128 round = hi + ((lo + ((u128)1 << 63)) >> 64);
#pragma unroll
    for (u32 t = 0; t < SR_TARGETS; t++) {
        if (t >= kc) break;
        u32 k = k0 + t;
        Mod m = load_mod(slots, ql + k);
        u128 a = acc[t] + round + (u128)dc[(u64)(ql + k) * n + j] * tqinv[k];
        r[((u64)c * bl + k) * n + j] = reduce_u128(a, m);
    }
}
