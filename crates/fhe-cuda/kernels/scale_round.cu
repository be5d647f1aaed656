// BFV scale-and-round, step 3 of fhe-math's `scale_round` (HPS with 64-bit fixed point): from
// the tensor d over Q ∪ B (coefficient form) to r_k = ⌊t·d/Q⌉ mod b_k (before the ⌊B/2⌋ shift,
// which the B -> Q conversion adds as its input offset). Integer-only, the same sums as
// `ScaleRoundTables::scale_round_component`, so the bits match the CPU.
#include "common.cuh"

// Targets (B limbs) per block: their sums stay in registers.
#define SR_TARGETS 8

// The rounding's input from Q limb i of component dc at coefficient j:
// y_i = [d_i·(QB/q_i)^-1]_{q_i} (qbhat: the inverses, then their Shoup companions).
__device__ __forceinline__ u64 sr_y(const u64* dc, u32 n, u32 j, u32 i, u32 ql, const u64* qbhat,
                                    const u64* slots) {
    const u64 q = slots[i * SLOT_STRIDE];
    return mul_shoup(dc[(u64)i * n + j], qbhat[i], qbhat[ql + i], q);
}
// Adds y_i·⌊θ_i·2^64⌋ to the fixed-point sum kept as its high and low 64-bit parts.
__device__ __forceinline__ void sr_theta_add(u64 y, u64 theta, u128& hi, u128& lo) {
    const u128 p = (u128)y * theta;
    hi += p >> 64;
    lo += (u64)p;
}
// The rounding term ⌊Σ_i y_i·θ_i⌉ from those parts.
__device__ __forceinline__ u128 sr_round(u128 hi, u128 lo) {
    return hi + ((lo + ((u128)1 << 63)) >> 64);
}

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
        const u64 y = sr_y(dc, n, j, i, ql, qbhat, slots);
        sr_theta_add(y, theta[i], hi, lo);
        const u64* col = omega + (u64)k0 * ql + i;
#pragma unroll
        for (u32 t = 0; t < SR_TARGETS; t++)
            if (t < kc) acc[t] += (u128)y * col[(u64)t * ql];
    }
    const u128 round = sr_round(hi, lo);
#pragma unroll
    for (u32 t = 0; t < SR_TARGETS; t++) {
        if (t >= kc) break;
        u32 k = k0 + t;
        Mod m = load_mod(slots, ql + k);
        u128 a = acc[t] + round + (u128)dc[(u64)(ql + k) * n + j] * tqinv[k];
        r[((u64)c * bl + k) * n + j] = reduce_u128(a, m);
    }
}

// Steps 3 and 4 in one pass (`scale_round_to_q`): each thread scales and rounds one coefficient
// of one component into all of B, keeping the residues in registers as the exact B -> Q
// conversion's v_k = (r_k + ⌊B/2⌋)·(B/b_k)^-1 mod b_k, and then converts them to every Q limb:
// out_j = (Σ_k v_k·(B/b_k mod q_j) + alpha·(q_j - B mod q_j)) mod q_j - (⌊B/2⌋ mod q_j), with
// alpha = ⌊Σ_k (v_k·bhi_k + ⌊v_k·blo_k / 2^64⌋) / 2^64⌋ over the B slots' Barrett constants
// (`keyswitch_convert`'s exact mode). The same sums as `scale_round_to_b` followed by that
// conversion, so the same words, without writing and reading back the B residues or forming
// y_i once per group of targets. For ql, bl <= SRQ_MAX (the launcher falls back to the two
// kernels otherwise).
#define SRQ_MAX 16
// Blocks of 256 an SM the kernel is compiled for, which sets its register cap: 3 (80 registers,
// a little spilled) measured faster than 2 (100 registers, no spill) by 15% and than 4 (64
// registers, more spilled) by 8% at PHANTOM_INT (H100, PERF.md twenty-second session; A/B runs:
// -DSRQ_MIN_BLOCKS=N).
#ifndef SRQ_MIN_BLOCKS
#define SRQ_MIN_BLOCKS 3
#endif
// a + Σ_{i < cnt} x_i·row_i, exactly in 128 bits (cnt <= SRQ_MAX terms below 2^121 each), in two
// chains (even and odd i) that halve the dependent additions.
__device__ __forceinline__ u128 srq_dot(const u64 (&x)[SRQ_MAX], const u64* row, u32 cnt, u128 a) {
    u128 odd = 0;
#pragma unroll
    for (u32 i = 0; i < SRQ_MAX; i += 2)
        if (i < cnt) a += (u128)x[i] * row[i];
#pragma unroll
    for (u32 i = 1; i < SRQ_MAX; i += 2)
        if (i < cnt) odd += (u128)x[i] * row[i];
    return a + odd;
}
// b_qhatinv: (B/b_k)^-1 mod b_k then their Shoup companions; h: [j][k] (B/b_k) mod q_j; h_in:
// ⌊B/2⌋ mod b_k; h_out: ⌊B/2⌋ mod q_j; bmodq: B mod q_j. out: component c's limb j at
// out + (c·out_stride + j)·n words. Grid: x over coefficients, z over the 3 components.
extern "C" __global__ void __launch_bounds__(256, SRQ_MIN_BLOCKS)
    scale_round_to_q(const u64* d, u32 n, u32 ql, u32 bl, const u64* qbhat, const u64* theta,
                     const u64* omega, const u64* tqinv, const u64* b_qhatinv, const u64* h,
                     const u64* h_in, const u64* h_out, const u64* bmodq, u64* out,
                     u32 out_stride, const u64* slots) {
    __shared__ u64 s_omega[SRQ_MAX * SRQ_MAX];
    __shared__ u64 s_h[SRQ_MAX * SRQ_MAX];
    for (u32 i = threadIdx.x; i < ql * bl; i += blockDim.x) {
        s_omega[i] = omega[i];
        s_h[i] = h[i];
    }
    __syncthreads();
    // The tables above overlap the previous kernel's tail; `d` is that kernel's output.
    pdl_wait();
    const u32 j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const u32 c = blockIdx.z;
    const u32 total = ql + bl;
    const u64* dc = d + (u64)c * total * n;
    // y_i and the rounding term R, as in scale_round_to_b.
    u64 y[SRQ_MAX];
    u128 hi = 0, lo = 0;
#pragma unroll
    for (u32 i = 0; i < SRQ_MAX; i++) {
        if (i < ql) {
            y[i] = sr_y(dc, n, j, i, ql, qbhat, slots);
            sr_theta_add(y[i], theta[i], hi, lo);
        }
    }
    const u128 round = sr_round(hi, lo);
    // r_k, then v_k of the exact conversion, one target at a time.
    u64 v[SRQ_MAX];
    u128 f = 0;
#pragma unroll
    for (u32 k = 0; k < SRQ_MAX; k++) {
        if (k < bl) {
            const Mod m = load_mod(slots, ql + k);
            const u128 a = round + (u128)dc[(u64)(ql + k) * n + j] * tqinv[k];
            const u64 r = reduce_u128(srq_dot(y, s_omega + k * ql, ql, a), m);
            v[k] = mul_shoup(mod_add(r, h_in[k], m.q), b_qhatinv[k], b_qhatinv[bl + k], m.q);
            f += (u128)v[k] * m.bhi + (u128)__umul64hi(v[k], m.blo);
        }
    }
    const u64 alpha = (u64)(f >> 64);
#pragma unroll 1
    for (u32 t = 0; t < ql; t++) {
        const Mod m = load_mod(slots, t);
        const u128 a = srq_dot(v, s_h + t * bl, bl, (u128)alpha * (m.q - bmodq[t]));
        out[((u64)c * out_stride + t) * n + j] = mod_sub(reduce_u128(a, m), h_out[t], m.q);
    }
}
