// Sums of 64-bit words times constants modulo a prime on the tensor cores (sm_80+), shared by
// the basis conversions (convert_mma.cuh) and BFV's scale-and-round (scale_round.cu).
//
// The sum of a target p, S = sum_i v_i·h_i (v_i < 2^61 the sources, h_i < p the target's row
// of constants), is split over the bytes of v_i and of the row's constants:
//   c_{i,a} = h_i·2^(8a) mod p,   S ≡ sum_{i,a} byte_a(v_i)·c_{i,a}
//   U_b = sum_{i,a} byte_a(v_i)·byte_b(c_{i,a})   (exact in s32: at most 128 terms of 255²),
//   S ≡ T = sum_b U_b·2^(8b) < 2^82                (mod p).
// U is a (coefficients × 8·sources) by (8·sources × 8 bytes) product: mma.m16n8k32 over u8,
// one n8 tile a target, one k32 chunk every four sources. T is then reduced once (`mma_reduce`
// below), so every output is the canonical residue the 128-bit integer sums give.
//
// Layout. A warp works on 32 consecutive coefficients (two m16 tiles). Lane (g = lane/4,
// i = lane%4) holds, for chunk c, the A fragment words of rows g and g+8 of each tile:
// half (i&1) of v at source 4c + (i>>1) and 4c + 2 + (i>>1) (the k index 8·source + byte).
// The B fragments (k rows 4i..4i+3 and 16+4i..16+4i+3, column g = byte b) are computed by the
// host (`mma_fragments` of kernels/keyswitch.rs) per target and chunk, in the order the lanes
// load them. A lane gets the accumulators of bytes 2i, 2i+1 of rows g, g+8 of both tiles; two
// exchanges (lanes i^1, then i^2) gather the 8 bytes of one coefficient in one lane: lane i
// finishes row g + 8·(i&1) of tile i>>1 (`mma_lane_coeff`), so a warp's stores for a target
// cover its 32 coefficients in order.
#pragma once
#include "common.cuh"

// Threads a block of the MMA conversion kernels (8 warps, 256 coefficients; BFV's
// scale-and-round takes SRQ_MMA_BLOCK).
#define MMA_BLOCK 256
// Blocks an SM the MMA conversion kernels are compiled for (their register cap). 4 (64
// registers) against 1 or 3 on the H100: N16_L24_D3's conversions in mod_up 5% faster,
// rotations 1-2% (BFV's scale-and-round has its own cap, SRQ_MMA_MIN_BLOCKS of scale_round.cu).
#define MMA_MIN_BLOCKS 4

// The one reduction of a target's sum, for targets 2^32 <= q < 2^61 (the host builds fragments
// only for those): with s = bitlen(q) - 1 and mu = floor(2^(s+32) / q) (below 2^32, q odd), and
// x < 2^(s+32), the estimate e = floor(floor(x / 2^s)·mu / 2^32) lies in
// [floor(x/q) - 2, floor(x/q)], so x - e·q < 3q is formed in 64 bits and two conditional
// subtractions end it. The sums stay below that bound: T < 2^(bitlen(q) + 22.01) (its bytes
// stop at q's), plus alpha·q (alpha <= 16), the offsets (below q) and the rescale's rounding
// term (below 2^61 + q), all below 2^(s+32) from 32 bits on (`mma_reduce_bound_holds`).
__device__ __forceinline__ u32 mma_shift(u64 q) { return 63 - __clzll(q); }

// mu = floor(2^(s+32) / q) from the slot's Barrett constant floor(2^128 / q).
__device__ __forceinline__ u32 mma_mu(const Mod& m, u32 s) {
    return (u32)((((u128)m.bhi << 64) | m.blo) >> (96 - s));
}

__device__ __forceinline__ u64 mma_reduce(u128 x, u64 q, u32 s, u32 mu) {
    const u64 x0 = (u64)x, x1 = (u64)(x >> 64);
    const u32 xs = (u32)(x0 >> s) | (u32)(x1 << (64 - s));
    const u32 e = __umulhi(xs, mu);
    return csub(csub(x0 - (u64)e * q, q), q);
}

// A target's residue of T + `add`, T = lo + hi·2^32 the byte sums of `mma_target_sum`, with the
// reduction's constants packed as mu | s << 32 (`packed`; bits from 40 up are ignored).
__device__ __forceinline__ u64 mma_residue(u64 lo, u64 hi, u128 add, u64 q, u64 packed) {
    const u128 x = (u128)lo + ((u128)hi << 32) + add;
    return mma_reduce(x, q, (u32)(packed >> 32) & 0xff, (u32)packed);
}

// Targets a loop iteration of the MMA kernels finishes side by side (independent chains of
// MMAs, exchanges and reductions that hide each other's latency).
#define MMA_UNROLL 4
#define MMA_PRAGMA_(x) _Pragma(#x)
#define MMA_PRAGMA(x) MMA_PRAGMA_(x)
#define MMA_UNROLL_TARGETS MMA_PRAGMA(unroll MMA_UNROLL)

// The coefficient (within the warp's 32) that lane `lane` finishes.
__device__ __forceinline__ u32 mma_lane_coeff(u32 lane) {
    const u32 tig = lane & 3;
    return 16 * (tig >> 1) + (lane >> 2) + 8 * (tig & 1);
}

// The A words 2j, 2j+1 of one tile (rows g and g+8 of one source) from the lane's value at
// its own row (g + 8·half_sel): its half `half_sel`, and lane^1's (the other row's) by exchange.
__device__ __forceinline__ void mma_a_words(u32 (&a)[4], int j, u64 v, u32 half_sel) {
    const u32 own = (u32)(v >> (32 * half_sel));
    const u32 got = __shfl_xor_sync(0xffffffffu, (u32)(v >> (32 * (half_sel ^ 1))), 1);
    a[2 * j] = half_sel ? got : own;
    a[2 * j + 1] = half_sel ? own : got;
}

// An 8-byte asynchronous copy from global to shared memory (sm_80+, `cp.async`), and the wait
// for the thread's copies (a barrier then makes every thread's copies visible to the block).
__device__ __forceinline__ void mma_copy_async(u64* dst, const u64* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(
                     (u32)__cvta_generic_to_shared(dst)),
                 "l"(src)
                 : "memory");
#else
    *dst = *src;
#endif
}
__device__ __forceinline__ void mma_copy_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// D += A·B for one m16n8k32 tile of unsigned bytes with s32 accumulation.
__device__ __forceinline__ void mma_u8(int (&d)[4], const u32 (&a)[4], uint2 b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b.x), "r"(b.y));
#else
    __trap();
#endif
}

// The A fragments of KC chunks: for each of the lane's sources i = 4c + 2j + par below `count`,
// `values(i, v)` gives the source's words at the lane's own row of tiles 0 and 1 (coefficients
// g + 8·half_sel and 16 + g + 8·half_sel of the warp's 32); the other sources are zeros.
template <int KC, typename Values>
__device__ __forceinline__ void mma_build_a(u32 (&a)[KC][2][4], u32 count, u32 par,
                                            u32 half_sel, Values values) {
#pragma unroll
    for (int c = 0; c < KC; c++)
#pragma unroll
        for (int j = 0; j < 2; j++) {
            const u32 i = 4 * c + 2 * j + par;
            u64 v[2] = {0, 0};
            if (i < count) values(i, v);
#pragma unroll
            for (int t = 0; t < 2; t++) mma_a_words(a[c][t], j, v[t], half_sel);
        }
}

// One target's sum for the lane's coefficient (see the layout above): the MMAs over the KC
// chunks of both tiles (fragments at frag_t in shared memory, KC chunks a target, those beyond
// the sources zero), then the byte sums gathered across the lane's group of four, returned as
// (lo, hi) with T = lo + hi·2^32: lo the bytes 0..3 (below 2^49), hi the bytes 4..7.
template <int KC>
__device__ __forceinline__ void mma_target_sum(const u32 (&a)[KC][2][4], const u32* frag_t,
                                               u32 lane, u64& lo, u64& hi) {
    int d[2][4];
#pragma unroll
    for (int t = 0; t < 2; t++)
#pragma unroll
        for (int j = 0; j < 4; j++) d[t][j] = 0;
#pragma unroll
    for (int c = 0; c < KC; c++) {
        const uint2 b = reinterpret_cast<const uint2*>(frag_t + c * 64)[lane];
        mma_u8(d[0], a[c][0], b);
        mma_u8(d[1], a[c][1], b);
    }
    const u32 tig = lane & 3, row = tig & 1, tile = tig >> 1;
    // Bytes 2·tig and 2·tig + 1 of rows g (d[.][0..1]) and g + 8 (d[.][2..3]): below 2^32.
    u32 w[2][2];
#pragma unroll
    for (int t = 0; t < 2; t++) {
        w[t][0] = (u32)d[t][0] + ((u32)d[t][1] << 8);
        w[t][1] = (u32)d[t][2] + ((u32)d[t][3] << 8);
    }
    // Exchange with lane^1: keep row `row`, giving the other row's word away.
    u64 s[2];
#pragma unroll
    for (int t = 0; t < 2; t++) {
        const u32 give = row ? w[t][0] : w[t][1];
        const u32 got = __shfl_xor_sync(0xffffffffu, give, 1);
        const u32 keep = row ? w[t][1] : w[t][0];
        // Even lanes hold bytes 4k..4k+1, odd lanes 4k+2..4k+3 (k = tig >> 1).
        s[t] = row ? (u64)got + ((u64)keep << 16) : (u64)keep + ((u64)got << 16);
    }
    // Exchange with lane^2: keep tile `tile`; lanes of tig >> 1 == 0 hold bytes 0..3.
    const u64 give = tile ? s[0] : s[1];
    const u64 got = __shfl_xor_sync(0xffffffffu, give, 2);
    const u64 keep = tile ? s[1] : s[0];
    lo = tile ? got : keep;
    hi = tile ? keep : got;
}

