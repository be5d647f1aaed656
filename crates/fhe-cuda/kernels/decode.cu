// Decryption's CRT decoding into Z_t (fhe-math's `CrtDecoder::run`, the same sums bit for bit):
// with y_i = [x_i·q̂_i^-1]_{q_i}, the 128-bit fixed-point fraction F̃ of Σ_i y_i·c/q_i (c = t for
// BFV's ⌊t·x/Q⌉, c = 1 for BGV's centred lift) gives the message and the noise fraction
// ρ̃ = F̃ - round(F̃). One thread per coefficient; each block also reduces max |ρ̃| and the two
// quarter tests, so only N words and a few per block cross to the host.
#include "common.cuh"

#define DECODE_BLOCK 256
// Words per limb row of the decoder table (`decode.rs`): q, q̂^-1 mod q, its Shoup companion,
// ⌊t/q⌋, ⌊(t mod q)·2^128/q⌋ (low, high), ⌊2^128/q⌋ (low, high), [q̂]_t, unused.
#define DECODE_ROW 10
// Words per block summary: max |ρ̃| (low, high), flags (bit 0: some |ρ̃| ≥ sure, bit 1: some
// |ρ̃| in [maybe, sure)).
#define DECODE_SUMMARY 3

// x: `limbs` limbs of n coefficients (limb i at x + i·n), coefficient form. t, t_bhi, t_blo: t
// with its Barrett constant. neg_q: -[Q]_t; scale: the BGV factor, reduced mod t. quarter: maybe (lo, hi)
// then sure (lo, hi). out: n words; summary: DECODE_SUMMARY words per block.
extern "C" __global__ void __launch_bounds__(DECODE_BLOCK)
    decode_crt_mod_t(const u64* x, u32 n, u32 limbs, const u64* tab, u64 t, u64 t_bhi,
                     u64 t_blo, u64 neg_q,
                     u64 scale, u32 scaled, const u64* quarter, u64* out, u64* summary) {
    pdl_wait();
    const Mod tmod = {t, t_bhi, t_blo};
    __shared__ u128 best[DECODE_BLOCK];
    __shared__ u32 flags;
    if (threadIdx.x == 0) flags = 0;
    const u32 j = blockIdx.x * DECODE_BLOCK + threadIdx.x;
    u128 a = 0;
    u32 flag = 0;
    if (j < n) {
        u128 frac = 0, whole = 0;
        u64 wraps = 0;
        for (u32 i = 0; i < limbs; i++) {
            const u64* r = tab + (u64)i * DECODE_ROW;
            const u64 y = mul_shoup(x[(u64)i * n + j], r[1], r[2], r[0]);
            if (scaled) {
                // y·⌊(t mod q)·2^128/q⌋ (192 bits): the low 128 bits join the fraction, the
                // top word and the carry the integer part, with y·⌊t/q⌋.
                const u128 p0 = (u128)y * r[4];
                const u128 p1 = (u128)y * r[5] + (p0 >> 64);
                const u128 low = (p1 << 64) | (u64)p0;
                const u128 f = frac + low;
                whole += (p1 >> 64) + (f < frac) + (u128)y * r[3];
                frac = f;
            } else {
                // y < q: y·⌊2^128/q⌋ < 2^128; a wrap of the fraction is a unit of α.
                const u128 f = frac + (u128)y * (((u128)r[7] << 64) | r[6]);
                wraps += f < frac;
                frac = f;
                whole += (u128)y * r[8];
            }
        }
        const u64 up = (u64)(frac >> 127);
        u64 v;
        if (scaled) {
            v = reduce_u128(whole + up, tmod);
        } else {
            // scale·(Σ y_i·[q̂_i]_t - α·[Q]_t) with α = wraps + up.
            const u64 alpha = reduce_u64(wraps + up, tmod);
            v = mod_add(reduce_u128(whole, tmod), mod_mul(alpha, neg_q, tmod), tmod.q);
            v = mod_mul(v, scale, tmod);
        }
        out[j] = v;
        // |ρ̃| of the fraction read as a signed 128-bit number.
        a = (frac >> 127) ? (u128)0 - frac : frac;
        const u128 maybe = ((u128)quarter[1] << 64) | quarter[0];
        const u128 sure = ((u128)quarter[3] << 64) | quarter[2];
        flag = a >= sure ? 1u : (a >= maybe ? 2u : 0u);
    }
    best[threadIdx.x] = a;
    __syncthreads();
    if (flag) atomicOr(&flags, flag);
    for (u32 s = DECODE_BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && best[threadIdx.x + s] > best[threadIdx.x])
            best[threadIdx.x] = best[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        u64* o = summary + (u64)blockIdx.x * DECODE_SUMMARY;
        o[0] = (u64)best[0];
        o[1] = (u64)(best[0] >> 64);
        o[2] = flags;
    }
}
