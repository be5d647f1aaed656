// Fast basis conversion on the tensor cores (sm_80+, mma.cuh): the same outputs as
// `convert_unrolled` of keyswitch.cu, word for word, with the target sums formed by 8-bit
// integer MMAs. The B fragments of the block's targets are staged in shared memory.
#pragma once
#include "common.cuh"
#include "mma.cuh"
#include "moddown.cuh"

// The block's tc targets (constants at tgt_c, 8 words each, as staged by `convert_mma`), written
// to their slots: `finish(tt, extra)` with the rescale's terms (zero off the rescale's rows z
// below the top), times t for BGV's switch (WITH_T). Branch-free, so that the unrolled
// iterations interleave.
template <bool WITH_T, typename Finish>
__device__ __forceinline__ void convert_mma_targets(const u64* tgt_c, u32 tc, u64 rounded,
                                                    u64* out, u32 n, u32 k, Finish finish) {
    MMA_UNROLL_TARGETS
    for (u32 tt = 0; tt < tc; tt++) {
        const u64* c = tgt_c + tt * 8;
        u64 y = finish(tt, (rounded & c[5]) + c[4]);
        if (WITH_T) y = mul_shoup(y, c[6], c[7], c[0]);
        out[(c[3] >> 40) * n + k] = y;
    }
}

// The conversion of `convert_unrolled` (same parameters and outputs, the fused rescale and the
// exact overflow correction included) for 1 <= from_cnt <= 4·KC sources. Grid: x over blocks
// of MMA_BLOCK coefficients, y over groups of `tpb` targets, z over batched conversions.
// Dynamic shared memory: (tpb + 1)·KC·256 bytes of B fragments, then (tpb + 1)·8 words of
// target constants (the extra target is the rescale's row `level`).
template <int KC>
__device__ __forceinline__ void convert_mma(const u64* in, u32 n, u32 from_slot0, u32 from_cnt,
                                            const u64* qhatinv, const u64* qhatinv_shoup,
                                            const u64* h, const u64* to_slots, u32 to_cnt,
                                            const u64* h_in, const u64* h_out, const u64* qmodp,
                                            u64* out, const u64* slots, const u64* cp_src,
                                            u64* cp_dst, u32 cp_cnt, const u64* top_w, u32 level,
                                            const u64* pinv, const u64* tq,
                                            const ConvStrides& st, u32 tpb,
                                            const u64* frag_g) {
    extern __shared__ u64 mma_smem[];
    batch_offsets(st, in, out, cp_src, cp_dst, qhatinv, qhatinv_shoup, h, to_slots, h_in, h_out,
                  qmodp, from_slot0);
    if (top_w) top_w += blockIdx.z * st.top;
    frag_g += blockIdx.z * st.table;
    const u32 t0 = blockIdx.y * tpb;
    const u32 tc = min(tpb, to_cnt - t0);
    // Staged rows: the block's targets, then (fused rescale) row `level` as target tc.
    const u32 rows = tc + (top_w ? 1 : 0);
    u32* frag = reinterpret_cast<u32*>(mma_smem);
    u64* tgt_c = mma_smem + (tpb + 1) * KC * 32;
    const u64 half = top_w ? slots[level * SLOT_STRIDE] >> 1 : 0;
    // The fragments arrive asynchronously while the constants and the A fragments form.
    for (u32 e = threadIdx.x; e < rows * KC * 32; e += blockDim.x) {
        const u32 tt = e / (KC * 32), w = e % (KC * 32);
        const u32 t = tt < tc ? t0 + tt : level;
        mma_copy_async(reinterpret_cast<u64*>(frag) + e, frag_g + (u64)t * KC * 32 + w);
    }
    // Per target: q, the offset -h_out, the overflow's multiplier q - (Q mod q), the reduction's
    // mu | s << 32 and the slot << 40, then for the rescale's targets z below the top (else 0):
    // q - (q_l/2 mod q) and an all-ones mask of the rounding term, and the t multiplier of
    // BGV's switch (else (1, floor(2^64/q)), which multiplies by one). With the rescale, the rows
    // below the top come scaled by P^-1 (`ConvLayout::mma_frag_pinv`), and so do their offset
    // and multiplier.
    for (u32 tt = threadIdx.x; tt < rows; tt += blockDim.x) {
        const u32 t = tt < tc ? t0 + tt : level;
        const u32 sl = (u32)to_slots[t];
        const Mod m = load_mod(slots, sl);
        const bool z = top_w && sl != level;
        u64 off = m.q - h_out[t], corr = qmodp ? m.q - qmodp[t] : 0;
        if (z) {
            off = mod_mul(off, pinv[2 * sl], m);
            corr = mod_mul(corr, pinv[2 * sl], m);
        }
        const u32 sh = mma_shift(m.q);
        u64* c = tgt_c + tt * 8;
        c[0] = m.q;
        c[1] = off;
        c[2] = corr;
        c[3] = mma_mu(m, sh) | (u64)sh << 32 | (u64)sl << 40;
        c[4] = z ? m.q - reduce_u64(half, m) : 0;
        c[5] = z ? ~0ull : 0;
        c[6] = z && tq ? tq[2 * sl] : 1;
        c[7] = z && tq ? tq[2 * sl + 1] : m.bhi;
    }
    // Everything above reads only tables (it overlaps the previous kernel's tail).
    pdl_wait();
    const u32 lane = threadIdx.x & 31, g = lane >> 2, tig = lane & 3;
    // The launcher takes n as a multiple of MMA_BLOCK: every warp has its 32 coefficients.
    const u32 warp_k = blockIdx.x * MMA_BLOCK + (threadIdx.x & ~31u);
    if (blockIdx.y == 0) {
        const u32 k = warp_k + lane;
        for (u32 i = 0; i < cp_cnt; i++) cp_dst[(u64)i * n + k] = cp_src[(u64)i * n + k];
    }
    // The A fragments: v at the lane's sources (parity tig >> 1) and coefficients
    // (g, g + 8 of tiles 0 and 1), half tig & 1 of each. A lane forms v for its own row
    // (g + 8·(tig & 1)) of both tiles and swaps halves with lane^1, which forms the other row;
    // for an exact conversion it also sums its part of the overflow F of those coefficients.
    u32 a[KC][2][4];
    u128 f[2] = {0, 0};
    const u32 par = tig >> 1, half_sel = tig & 1;
    mma_build_a<KC>(a, from_cnt, par, half_sel, [&](u32 i, u64(&v)[2]) {
        const Mod mi = load_mod(slots, from_slot0 + i);
        const u64 hi_in = h_in[i], w = qhatinv[i], ws = qhatinv_shoup[i];
        const u64* src = in + (u64)i * n + warp_k + g + 8 * half_sel;
#pragma unroll
        for (int t = 0; t < 2; t++) {
            v[t] = mul_shoup(mod_add(src[16 * t], hi_in, mi.q), w, ws, mi.q);
            if (qmodp) f[t] += (u128)v[t] * mi.bhi + (u128)__umul64hi(v[t], mi.blo);
        }
    });
    // The lane finishes row tig & 1 of tile tig >> 1; lane^2 holds the other parity's part.
    u64 alpha = 0;
    if (qmodp) {
        const u128 give = par ? f[0] : f[1], keep = par ? f[1] : f[0];
        const u64 lo = __shfl_xor_sync(0xffffffffu, (u64)give, 2);
        const u64 hi = __shfl_xor_sync(0xffffffffu, (u64)(give >> 64), 2);
        alpha = (u64)((keep + (((u128)hi << 64) | lo)) >> 64);
    }
    // The staged fragments and constants, visible to the whole block.
    mma_copy_wait();
    __syncthreads();
    const u32 k = warp_k + mma_lane_coeff(lane);
    // Staged target tt's residue of T + alpha·c[2] + c[1] + extra (constants at tgt_c + 8·tt,
    // fragments at frag + tt·KC·64): the conversion (exact: alpha·(p - Q mod p)) less h_out,
    // with the rescale's rows times P^-1 and `extra` its rounding terms; one `mma_reduce`.
    auto finish = [&](u32 tt, u64 extra) -> u64 {
        const u64* c = tgt_c + tt * 8;
        u64 lo, hi;
        mma_target_sum<KC>(a, frag + tt * KC * 64, lane, lo, hi);
        return mma_residue(lo, hi, (u128)c[2] * (u32)alpha + c[1] + extra, c[0], c[3]);
    };
    u64 rounded = 0;
    if (top_w) {
        const u64 conv_l = finish(tc, 0);
        const u64 ql = tgt_c[tc * 8];
        rounded = mod_down_rescale_rounded(top_w[k], conv_l, pinv, level, half, ql);
    }
    if (tq)
        convert_mma_targets<true>(tgt_c, tc, rounded, out, n, k, finish);
    else
        convert_mma_targets<false>(tgt_c, tc, rounded, out, n, k, finish);
}
